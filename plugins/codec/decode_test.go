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
