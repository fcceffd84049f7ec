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
		got, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := png.Decode(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if b := m.Bounds(); b.Dx() != width || b.Dy() != height {
			t.Errorf("%s is %dx%d, want %dx%d", p.name, b.Dx(), b.Dy(), width, height)
		}
		want, err := os.ReadFile(filepath.Join("..", "images", p.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the program writes %d bytes that differ from the %d committed; run go generate", p.name, len(got), len(want))
		}
	}
	committed, err := filepath.Glob(filepath.Join("..", "images", "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	for i, path := range committed {
		committed[i] = filepath.Base(path)
	}
	slices.Sort(names)
	if !slices.Equal(committed, names) {
		t.Errorf("../images holds %v, the program draws %v", committed, names)
	}
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

// The committed photos in ../photos are what the program writes, byte
// for byte: 640x480 JPEGs, with the EXIF orientation each is stored with.
func TestCommittedPhotos(t *testing.T) {
	dir := t.TempDir()
	if err := generatePhotos(dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range photos {
		names = append(names, p.name)
		got, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := jpeg.Decode(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if b := m.Bounds(); b.Dx() != 2*width || b.Dy() != 2*height {
			t.Errorf("%s is %dx%d, want %dx%d", p.name, b.Dx(), b.Dy(), 2*width, 2*height)
		}
		exif := []byte("Exif\x00\x00MM\x00\x2a")
		if has := bytes.Contains(got[:64], exif); has != (p.orientation != 1) {
			t.Errorf("%s: EXIF block present %v, orientation %d", p.name, has, p.orientation)
		}
		if p.orientation != 1 && !bytes.Contains(got[:64], []byte{0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(p.orientation)}) {
			t.Errorf("%s: no orientation tag %d", p.name, p.orientation)
		}
		want, err := os.ReadFile(filepath.Join("..", "photos", p.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the program writes %d bytes that differ from the %d committed; run go generate", p.name, len(got), len(want))
		}
	}
	committed, err := filepath.Glob(filepath.Join("..", "photos", "*.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	for i, path := range committed {
		committed[i] = filepath.Base(path)
	}
	slices.Sort(names)
	if !slices.Equal(committed, names) {
		t.Errorf("../photos holds %v, the program draws %v", committed, names)
	}
}
