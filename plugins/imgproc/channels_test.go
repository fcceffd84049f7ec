package imgproc_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
)

// TestChannelsInSchemas: the channel counts imgproc's C schemas declare
// (dynop_op_input 1.1 channels, dynop_op_output 1.2 channels) reach the
// host the same through the native and the WebAssembly loader: the
// inputs' allowed counts, a fixed count, and DYNOP_CHANNELS_LIKE.
func TestChannelsInSchemas(t *testing.T) {
	ctx := context.Background()
	for _, lib := range []string{cbuild.Imgproc(t), cbuild.ImgprocWasm(t)} {
		h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{lib}, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			op       string
			in       []int
			channels int
		}{
			{imgproc.Grayscale, []int{3, 4}, 1},
			{imgproc.GaussianBlur, []int{1, 3, 4}, schema.ChannelsLike},
			{imgproc.Resize, []int{1, 3, 4}, schema.ChannelsLike},
			{imgproc.UnsharpMask, []int{1, 3, 4}, schema.ChannelsLike},
			{imgproc.Rotate, []int{1, 3, 4}, schema.ChannelsLike},
			{imgproc.ColorTwist, []int{3, 4}, schema.ChannelsLike},
			{imgproc.ColorConvert, []int{1, 3, 4}, 0},
			{imgproc.Normalize, nil, 0},
		} {
			e, err := h.Operators().Lookup(c.op)
			if err != nil {
				t.Fatal(err)
			}
			s := e.Schema
			if !slices.Equal(s.Inputs[0].Channels, c.in) || s.Outputs[0].Channels != c.channels {
				t.Errorf("%s from %s: input channels %v, output channels %d; want %v and %d", c.op, lib, s.Inputs[0].Channels, s.Outputs[0].Channels, c.in, c.channels)
			}
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
