package image_test

import (
	"bytes"
	"fmt"
	goimage "image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/dynop/dynop/schema"
)

// quadrants is a 16x8 JPEG (quality 100) of four solid quadrants: red top
// left, green top right, blue bottom left, white bottom right; with an
// EXIF APP1 segment of orientation o (big-endian) unless o is 0.
func quadrants(t testing.TB, o int) []byte {
	t.Helper()
	m := goimage.NewRGBA(goimage.Rect(0, 0, 16, 8))
	for y := range 8 {
		for x := range 16 {
			c := []color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}}[2*(y/4)+x/8]
			m.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if o == 0 {
		return data
	}
	return withEXIF(data, []byte{'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o), 0, 0, 0, 0, 0, 0})
}

// withEXIF inserts an APP1 segment "Exif\0\0" + tiff after the SOI.
func withEXIF(jpg, tiff []byte) []byte {
	payload := append([]byte("Exif\x00\x00"), tiff...)
	n := len(payload) + 2
	seg := append([]byte{0xFF, 0xE1, byte(n >> 8), byte(n)}, payload...)
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

// TestDecodeEXIFOrientation: image.Decode turns JPEGs upright by their
// EXIF orientation, which the corners of a four-colour image show: the
// shape is swapped for 5 to 8, and each corner holds the colour the
// orientation brings there; orientation false and PNG are left as they
// are.
func TestDecodeEXIFOrientation(t *testing.T) {
	h := openHost(t)
	const r, g, b, w = "R", "G", "B", "W"
	// The colours at the top-left, top-right, bottom-left and
	// bottom-right corners after each orientation.
	want := map[int][4]string{
		1: {r, g, b, w}, 2: {g, r, w, b}, 3: {w, b, g, r}, 4: {b, w, r, g},
		5: {r, b, g, w}, 6: {b, r, w, g}, 7: {w, g, b, r}, 8: {g, w, r, b},
	}
	name := func(p []uint8) string {
		switch {
		case p[0] > 200 && p[1] > 200 && p[2] > 200:
			return w
		case p[0] > 200:
			return r
		case p[1] > 200:
			return g
		case p[2] > 200:
			return b
		}
		return fmt.Sprint(p)
	}
	for o := 0; o <= 8; o++ {
		for _, on := range []bool{true, false} {
			outs := run(t, h, "image.Decode", schema.Args{"orientation": on}, batch(t, sample(t, "", quadrants(t, o), int64(len(quadrants(t, o))))))
			x := outs[0].Sample(0)
			eff := o
			if o == 0 || !on {
				eff = 1
			}
			s := x.Shape()
			if eff >= 5 && (s[0] != 16 || s[1] != 8) || eff < 5 && (s[0] != 8 || s[1] != 16) {
				t.Fatalf("orientation %d (applied %v): shape %v", o, on, s)
			}
			px, err := x.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			hh, ww := int(s[0]), int(s[1])
			at := func(y, x int) []uint8 { return px[(y*ww+x)*3:][:3] }
			got := [4]string{name(at(0, 0)), name(at(0, ww-1)), name(at(hh-1, 0)), name(at(hh-1, ww-1))}
			if got != want[eff] {
				t.Errorf("orientation %d (applied %v): corners %v, want %v", o, on, got, want[eff])
			}
		}
	}
}

// FuzzImageEXIF: an arbitrary APP1 payload in a valid JPEG never makes
// image.Decode fail or panic: its EXIF parser ignores what it cannot
// read, and the image decodes as it is or turned, its width and height
// swapped or not.
func FuzzImageEXIF(f *testing.F) {
	h := openHostB(f)
	jpg := quadrants(f, 0)
	for o := range 10 {
		f.Add(append([]byte("Exif\x00\x00"), 'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, byte(o), 0, 0, 0, 0, 0, 0, 0))
	}
	f.Add([]byte("Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08\xff\xff"))
	inst, err := h.NewOperator(f.Context(), "image.Decode", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { inst.Close() })
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > 65533 {
			payload = payload[:65533]
		}
		n := len(payload) + 2
		data := append(append(append([]byte{}, jpg[:2]...), append([]byte{0xFF, 0xE1, byte(n >> 8), byte(n)}, payload...)...), jpg[2:]...)
		outs, err := inst.Exec(t.Context(), batch(t, sample(t, "", data, int64(len(data)))))
		if err != nil {
			t.Fatalf("a JPEG with an APP1 of % x: %v", payload[:min(len(payload), 32)], err)
		}
		if s := outs[0].Sample(0).Shape(); !(s[0] == 8 && s[1] == 16) && !(s[0] == 16 && s[1] == 8) {
			t.Fatalf("shape %v, want 8x16 or 16x8", s)
		}
	})
}
