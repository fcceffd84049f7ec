package codec_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"

	"github.com/dynop/dynop/plugins/codec"
	"github.com/dynop/dynop/schema"
)

// TestDecodeJPEGMatchesGo: colour and gray JPEGs decode to 1, 3 and 4
// channels within the tolerance the package doc states of what
// image.Decode (Go's image/jpeg) gives: at most 3 apart in any channel,
// under 0.2 on average.
func TestDecodeJPEGMatchesGo(t *testing.T) {
	h := openCodec(t)
	for _, src := range []struct {
		name string
		img  image.Image
	}{{"colour", photo(97, 61, false)}, {"gray", gray(97, 61)}, {"colour 640x480", photo(640, 480, false)}} {
		for _, q := range []int{50, 90, 100} {
			data := encodeJPEG(t, src.img, q)
			for _, c := range []int{1, 3, 4} {
				t.Run(fmt.Sprintf("%s q%d c%d", src.name, q, c), func(t *testing.T) {
					args := schema.Args{"channels": c}
					want := mustDecode(t, h, "image.Decode", data, args)
					got := mustDecode(t, h, codec.Decode, data, args)
					maxd, mean := diff(t, got, want)
					t.Logf("max %d, mean %.4f", maxd, mean)
					if maxd > 3 || mean >= 0.2 {
						t.Errorf("codec.Decode differs from image.Decode by up to %d, %.4f on average; the doc says at most 3 and under 0.2", maxd, mean)
					}
				})
			}
		}
	}
}

// TestDecodePNGMatchesGo: PNGs of every colour type image/png writes
// (gray, RGB, RGBA, 16-bit gray and RGBA, paletted with and without
// transparency) and an interlaced one (libvips) decode to exactly what
// image.Decode gives, to 1, 3 and 4 channels.
func TestDecodePNGMatchesGo(t *testing.T) {
	h := openCodec(t)
	p := photo(37, 23, true)
	opaque := photo(37, 23, false)
	g16 := image.NewGray16(p.Rect)
	n64 := image.NewNRGBA64(p.Rect)
	pal := image.NewPaletted(p.Rect, color.Palette{color.RGBA{255, 0, 0, 255}, color.NRGBA{0, 255, 0, 128}, color.RGBA{0, 0, 255, 255}, color.NRGBA{10, 20, 30, 0}})
	palOpaque := image.NewPaletted(p.Rect, color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 99, 0, 255}, color.RGBA{7, 0, 255, 255}})
	for i := range p.Pix {
		n64.Pix[2*i], n64.Pix[2*i+1] = p.Pix[i], uint8(i*7)
	}
	for i := range g16.Pix {
		g16.Pix[i] = uint8(i * 13)
	}
	for i := range pal.Pix {
		pal.Pix[i], palOpaque.Pix[i] = uint8(i%4), uint8(i%3)
	}
	interlaced, err := os.ReadFile("testdata/interlaced.png")
	if err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name string
		data []byte
	}{{"interlaced (libvips)", interlaced}}
	for _, c := range []struct {
		name string
		img  image.Image
	}{{"gray", gray(37, 23)}, {"rgb", opaque}, {"rgba", p}, {"gray16", g16}, {"rgba64", n64}, {"palette+tRNS", pal}, {"palette", palOpaque}} {
		var b bytes.Buffer
		if err := png.Encode(&b, c.img); err != nil {
			t.Fatal(err)
		}
		files = append(files, struct {
			name string
			data []byte
		}{c.name, b.Bytes()})
	}
	for _, f := range files {
		for _, c := range []int{1, 3, 4} {
			t.Run(fmt.Sprintf("%s c%d", f.name, c), func(t *testing.T) {
				args := schema.Args{"channels": c}
				want := mustDecode(t, h, "image.Decode", f.data, args)
				got := mustDecode(t, h, codec.Decode, f.data, args)
				if maxd, _ := diff(t, got, want); maxd != 0 {
					t.Errorf("codec.Decode differs from image.Decode by up to %d", maxd)
				}
			})
		}
	}
}

// TestEXIFOrientation: JPEGs with an EXIF APP1 segment of orientation 1 to
// 8 (little- and big-endian) decode turned upright as the package doc
// says, width and height swapped for 5 to 8, through scratch for those;
// with orientation false they are not turned. The Go image.Decode turns
// them the same way, its own decode turned exactly.
func TestEXIFOrientation(t *testing.T) {
	h := openCodec(t)
	base := encodeJPEG(t, photo(45, 28, false), 95)
	for _, c := range []int{1, 3, 4} {
		plain := mustDecode(t, h, codec.Decode, base, schema.Args{"channels": c})
		plainGo := mustDecode(t, h, "image.Decode", base, schema.Args{"channels": c})
		for o := 1; o <= 8; o++ {
			for _, le := range []bool{true, false} {
				t.Run(fmt.Sprintf("c%d o%d le=%v", c, o, le), func(t *testing.T) {
					data := withAPP1(base, exifOrientation(uint16(o), le))
					got := mustDecode(t, h, codec.Decode, data, schema.Args{"channels": c})
					if maxd, _ := diff(t, got, orient(t, plain, o)); maxd != 0 {
						t.Errorf("orientation %d: differs from the turned image by up to %d", o, maxd)
					}
					off := mustDecode(t, h, codec.Decode, data, schema.Args{"channels": c, "orientation": false})
					if maxd, _ := diff(t, off, plain); maxd != 0 {
						t.Errorf("orientation off: differs from the plain image by up to %d", maxd)
					}
					goGot := mustDecode(t, h, "image.Decode", data, schema.Args{"channels": c})
					if maxd, _ := diff(t, goGot, orient(t, plainGo, o)); maxd != 0 {
						t.Errorf("image.Decode, orientation %d: differs from its turned image by up to %d", o, maxd)
					}
					goOff := mustDecode(t, h, "image.Decode", data, schema.Args{"channels": c, "orientation": false})
					if maxd, _ := diff(t, goOff, plainGo); maxd != 0 {
						t.Errorf("image.Decode, orientation off: differs from its plain image by up to %d", maxd)
					}
				})
			}
		}
	}
}

// TestMalformedEXIF: EXIF that is malformed in any of the ways the parser
// checks is ignored: the image decodes as orientation 1, never fails, in
// codec.Decode and in the Go image.Decode (whose parser is Go's own).
func TestMalformedEXIF(t *testing.T) {
	h := openCodec(t)
	base := encodeJPEG(t, photo(20, 12, false), 90)
	plain := mustDecode(t, h, codec.Decode, base, nil)
	plainGo := mustDecode(t, h, "image.Decode", base, nil)
	good := exifOrientation(6, true)
	cases := map[string][]byte{
		"no TIFF":             []byte("Exif\x00\x00"),
		"bad byte order":      append([]byte("Exif\x00\x00XX"), good[8:]...),
		"bad magic":           append(append([]byte{}, good[:8]...), append([]byte{0x2b, 0}, good[10:]...)...),
		"IFD past the end":    append(append([]byte{}, good[:10]...), append([]byte{0xff, 0xff, 0, 0}, good[14:]...)...),
		"entries past end":    good[:len(good)-12],
		"orientation 9":       exifOrientation(9, true),
		"orientation 0":       exifOrientation(0, false),
		"wrong type":          bytes.Replace(good, []byte{0x12, 0x01, 3, 0}, []byte{0x12, 0x01, 4, 0}, 1),
		"wrong count":         bytes.Replace(good, []byte{0x12, 0x01, 3, 0, 1, 0}, []byte{0x12, 0x01, 3, 0, 2, 0}, 1),
		"huge entry count":    bytes.Replace(good, []byte{2, 0, 0x0e, 0x01}, []byte{0xff, 0xff, 0x0e, 0x01}, 1),
		"not Exif":            append([]byte("http://ns.adobe.com/xap/1.0/\x00"), good[6:]...),
		"truncated TIFF head": []byte("Exif\x00\x00II*"),
	}
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustDecode(t, h, codec.Decode, withAPP1(base, payload), nil)
			if maxd, _ := diff(t, got, plain); maxd != 0 {
				t.Errorf("malformed EXIF changed the image (by up to %d)", maxd)
			}
			goGot := mustDecode(t, h, "image.Decode", withAPP1(base, payload), nil)
			if maxd, _ := diff(t, goGot, plainGo); maxd != 0 {
				t.Errorf("malformed EXIF changed image.Decode's image (by up to %d)", maxd)
			}
		})
	}
	// A segment length past the end of the file: the markers are
	// malformed, the orientation ignored, and libjpeg then says what is
	// wrong with the file.
	bad := withAPP1(base, good)
	bad[4], bad[5] = 0xff, 0xff
	_, err := decodeWith(t, h, codec.Decode, bad, nil)
	if err == nil {
		t.Fatal("a JPEG whose APP1 runs past its end decoded")
	}
}

// TestShrinkOnLoad: min_width and min_height pick the smallest DCT scale
// whose output is at least that large, after orientation, and the scaled
// image is the full one made smaller (within 6 on average of 2x2 means).
func TestShrinkOnLoad(t *testing.T) {
	h := openCodec(t)
	src := photo(200, 120, false)
	data := encodeJPEG(t, src, 95)
	rot := withAPP1(data, exifOrientation(6, false))
	for _, c := range []struct {
		data         []byte
		minW, minH   int
		wantW, wantH int64
	}{
		{data, 0, 0, 200, 120},
		{data, 1, 0, 25, 15},
		{data, 0, 15, 25, 15},
		{data, 26, 0, 50, 30},
		{data, 50, 30, 50, 30},
		{data, 51, 30, 100, 60},
		{data, 100, 61, 200, 120},
		{data, 1000, 1000, 200, 120},
		{rot, 30, 0, 30, 50},  // turned: the output's width is the file's height
		{rot, 31, 0, 60, 100}, // 1/4 gives 30 columns
		{rot, 0, 26, 30, 50},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.minW, c.minH), func(t *testing.T) {
			got := mustDecode(t, h, codec.Decode, c.data, schema.Args{"min_width": c.minW, "min_height": c.minH})
			if s := got.Shape(); s[0] != c.wantH || s[1] != c.wantW || s[2] != 3 {
				t.Errorf("shape %v, want [%d %d 3]", s, c.wantH, c.wantW)
			}
		})
	}
	// Half size against the full decode's 2x2 means.
	full := mustDecode(t, h, codec.Decode, data, nil)
	half := mustDecode(t, h, codec.Decode, data, schema.Args{"min_width": 100})
	fp, _, fw, _ := pixels(t, full)
	hp, hh, hw, _ := pixels(t, half)
	sum := 0
	for y := range hh {
		for x := range hw {
			for k := range 3 {
				m := (int(fp[((2*y)*fw+2*x)*3+k]) + int(fp[((2*y)*fw+2*x+1)*3+k]) + int(fp[((2*y+1)*fw+2*x)*3+k]) + int(fp[((2*y+1)*fw+2*x+1)*3+k]) + 2) / 4
				d := m - int(hp[(y*hw+x)*3+k])
				sum += max(d, -d)
			}
		}
	}
	if mean := float64(sum) / float64(hh*hw*3); mean > 6 {
		t.Errorf("the half-size decode is %.2f from the full one's 2x2 means on average", mean)
	}
}

// TestCMYKJPEG: a CMYK JPEG (Adobe, YCCK, written by libvips) converts to
// RGB as image/jpeg and color.CMYKToRGB do, within the JPEG tolerance,
// turned by its orientation like any other.
func TestCMYKJPEG(t *testing.T) {
	h := openCodec(t)
	data, err := os.ReadFile("testdata/cmyk.jpg")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{1, 3, 4} {
		want := mustDecode(t, h, "image.Decode", data, schema.Args{"channels": c})
		got := mustDecode(t, h, codec.Decode, data, schema.Args{"channels": c})
		if maxd, mean := diff(t, got, want); maxd > 3 || mean >= 0.2 {
			t.Errorf("c%d: differs from image.Decode by up to %d, %.3f on average", c, maxd, mean)
		}
		rot := mustDecode(t, h, codec.Decode, withAPP1(data, exifOrientation(7, true)), schema.Args{"channels": c})
		if maxd, _ := diff(t, rot, orient(t, got, 7)); maxd != 0 {
			t.Errorf("c%d orientation 7: differs from the turned image by up to %d", c, maxd)
		}
	}
}
