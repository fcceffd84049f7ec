package image

import (
	"image/color"
	"testing"
)

// unpremultiply agrees with color.NRGBAModel for every premultiplied
// pixel an 8-bit image can hold.
func TestUnpremultiply(t *testing.T) {
	var got [4]byte
	for a := range 256 {
		for v := 0; v <= a; v++ {
			src := color.RGBA{uint8(v), uint8(a - v), uint8(v / 2), uint8(a)}
			unpremultiply(got[:], []byte{src.R, src.G, src.B, src.A})
			want := color.NRGBAModel.Convert(src).(color.NRGBA)
			if got != [4]byte{want.R, want.G, want.B, want.A} {
				t.Fatalf("%v: got %v, want %v", src, got, want)
			}
		}
	}
}

// The taps of a 2-to-4 upscale, as the package doc computes them.
func TestTaps(t *testing.T) {
	want := []tap{{0, 1, 0}, {0, 1, 0.25}, {0, 1, 0.75}, {1, 1, 0}}
	got := taps(nil, 2, 4)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tap %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Downscaling 5 to 2 samples the centres of 2.5-pixel spans: 0.75 and 3.25.
	got = taps(got, 5, 2)
	if want := []tap{{0, 1, 0.75}, {3, 4, 0.25}}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("5 to 2: %+v, want %+v", got, want)
	}
}
