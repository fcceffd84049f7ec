package imgproc_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
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

// TestRefusalCodes: imgproc follows dynop.h's rule for an input it
// refuses, through both loaders. A channel count or size no argument of
// the operator takes is DYNOP_ERROR_UNSUPPORTED (dynop.ErrUnsupported),
// for an operator of 1, 3 or 4 channels as for one of 3 or 4; an input
// that contradicts the arguments is DYNOP_ERROR_INVALID_ARGUMENT
// (schema.ErrPlugin), and not ErrUnsupported.
func TestRefusalCodes(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 3))
	gray := imageBatch(t, rng, tensor.Uint8, 8, 8, 1)
	two := imageBatch(t, rng, tensor.Uint8, 8, 8, 2)
	rgb := imageBatch(t, rng, tensor.Uint8, 8, 8, 3)
	tall := imageBatch(t, rng, tensor.Uint8, 1<<18+1, 1, 1)
	for _, lib := range []string{cbuild.Imgproc(t), cbuild.ImgprocWasm(t)} {
		h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{lib}, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			op     string
			args   schema.Args
			in     *tensor.Batch
			target error
			want   string
		}{
			{imgproc.GaussianBlur, schema.Args{"sigma": 1.0}, two, dynop.ErrUnsupported, "returned DYNOP_ERROR_UNSUPPORTED: imgproc.GaussianBlur: unsupported channel count 2 (want 1, 3 or 4)"},
			{imgproc.Grayscale, nil, gray, dynop.ErrUnsupported, "returned DYNOP_ERROR_UNSUPPORTED: imgproc.Grayscale: unsupported channel count 1 (want 3 or 4)"},
			{imgproc.ColorTwist, schema.Args{"saturation": 0.5}, two, dynop.ErrUnsupported, "returned DYNOP_ERROR_UNSUPPORTED: imgproc.ColorTwist: unsupported channel count 2 (want 3 or 4)"},
			{imgproc.Rotate, schema.Args{"angle": 90.0}, tall, dynop.ErrUnsupported, "returned DYNOP_ERROR_UNSUPPORTED: imgproc.Rotate: image 1x262145 (width x height) is larger than 262144"},
			{imgproc.ColorConvert, schema.Args{"from": "gray", "to": "rgb"}, rgb, schema.ErrPlugin, "returned DYNOP_ERROR_INVALID_ARGUMENT: imgproc.ColorConvert: from gray takes 1 channel, got 3"},
		} {
			_, err := exec(h, c.op, c.args, c.in)
			testutil.WantErr(t, err, c.target, c.want)
			if c.target != dynop.ErrUnsupported && errors.Is(err, dynop.ErrUnsupported) {
				t.Errorf("%s from %s: %v is ErrUnsupported", c.op, lib, err)
			}
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
