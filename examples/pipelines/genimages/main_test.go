package main

import (
	"bytes"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// checkCommitted checks that the files the program wrote into dir are
// the committed ones in ../committed, byte for byte, and that ../committed
// holds no other file matching glob; check looks at each file's bytes.
func checkCommitted(t *testing.T, dir, committed, glob string, names []string, check func(name string, data []byte)) {
	t.Helper()
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		check(name, got)
		want, err := os.ReadFile(filepath.Join("..", committed, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the program writes %d bytes that differ from the %d committed; run go generate", name, len(got), len(want))
		}
	}
	files, err := filepath.Glob(filepath.Join("..", committed, glob))
	if err != nil {
		t.Fatal(err)
	}
	for i, path := range files {
		files[i] = filepath.Base(path)
	}
	names = slices.Sorted(slices.Values(names))
	if !slices.Equal(files, names) {
		t.Errorf("../%s holds %v, the program draws %v", committed, files, names)
	}
}

// The committed images in ../images are what the program draws, byte for
// byte, and nothing else.
func TestCommittedImages(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pictures {
		names = append(names, p.name)
	}
	checkCommitted(t, dir, "images", "*.png", names, func(name string, data []byte) {
		m, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := m.Bounds(); b.Dx() != width || b.Dy() != height {
			t.Errorf("%s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), width, height)
		}
	})
}

// The committed photos in ../photos are what the program writes, byte
// for byte: 640x480 JPEGs, with the EXIF orientation each is stored with.
func TestCommittedPhotos(t *testing.T) {
	dir := t.TempDir()
	if err := generatePhotos(dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	orientation := map[string]int{}
	for _, p := range photos {
		names = append(names, p.name)
		orientation[p.name] = p.orientation
	}
	checkCommitted(t, dir, "photos", "*.jpg", names, func(name string, data []byte) {
		m, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := m.Bounds(); b.Dx() != 2*width || b.Dy() != 2*height {
			t.Errorf("%s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), 2*width, 2*height)
		}
		o := orientation[name]
		exif := []byte("Exif\x00\x00MM\x00\x2a")
		if has := bytes.Contains(data[:64], exif); has != (o != 1) {
			t.Errorf("%s: EXIF block present %v, orientation %d", name, has, o)
		}
		if o != 1 && !bytes.Contains(data[:64], []byte{0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o)}) {
			t.Errorf("%s: no orientation tag %d", name, o)
		}
	})
}

// sin is exact at multiples of a quarter turn and close to the sine
// everywhere.
func TestSin(t *testing.T) {
	for a, want := range map[int64]int64{0: 0, turn / 4: one, turn / 2: 0, 3 * turn / 4: -one, -turn / 4: -one, 5 * turn / 4: one} {
		if got := sin(a); got != want {
			t.Errorf("sin(%d) = %d, want %d", a, got, want)
		}
	}
	for a := range int64(turn) {
		want := one * math.Sin(2*math.Pi*float64(a)/turn)
		if got := sin(a); math.Abs(float64(got)-want) > one*0.0017+1 {
			t.Fatalf("sin(%d) = %d, the sine is %.1f", a, got, want)
		}
	}
}
