package codec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop/internal/testimage"
	"github.com/dynop/dynop/plugins/codec"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// photo1080 is a 1920x1080 photo from internal/testimage (JPEG quality
// 90), the main job's input size.
func photo1080(b *testing.B) []byte {
	dir := b.TempDir()
	if err := testimage.WriteJPEGs(dir, 1, 1920, 1080); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "photo00.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecode1080: one 1920x1080 JPEG per op, to RGB, by Go's
// image.Decode and by codec.Decode at full size and shrunk on load to
// at least 960x540 (1/2).
func BenchmarkDecode1080(b *testing.B) {
	h := openCodec(b)
	data := photo1080(b)
	for _, c := range []struct {
		name, op string
		args     schema.Args
	}{
		{"go", "image.Decode", nil},
		{"codec", codec.Decode, nil},
		{"codec-shrink-half", codec.Decode, schema.Args{"min_width": 960, "min_height": 540}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			inst, err := h.NewOperator(ctx, c.op, c.args)
			if err != nil {
				b.Fatal(err)
			}
			defer inst.Close()
			in, _ := tensor.NewBatch(bytesT(b, data))
			for b.Loop() {
				outs, err := inst.Exec(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				inst.Recycle(outs)
			}
		})
	}
}

// BenchmarkEncode1080: one 1920x1080 RGB image per op as JPEG quality 90
// (4:2:0) and PNG (default level), by Go's image.Encode and by
// codec.Encode.
func BenchmarkEncode1080(b *testing.B) {
	h := openCodec(b)
	img := mustDecode(b, h, codec.Decode, photo1080(b), nil)
	for _, c := range []struct {
		name, op string
		args     schema.Args
	}{
		{"jpeg/go", "image.Encode", schema.Args{"format": "jpeg", "quality": 90}},
		{"jpeg/codec", codec.Encode, schema.Args{"format": "jpeg", "quality": 90}},
		{"png/go", "image.Encode", schema.Args{"format": "png"}},
		{"png/codec", codec.Encode, schema.Args{"format": "png"}},
		{"png1/codec", codec.Encode, schema.Args{"format": "png", "compression": 1}},
		{"webp/codec", codec.Encode, schema.Args{"format": "webp", "quality": 90}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			inst, err := h.NewOperator(ctx, c.op, c.args)
			if err != nil {
				b.Fatal(err)
			}
			defer inst.Close()
			in, _ := tensor.NewBatch(img)
			for b.Loop() {
				outs, err := inst.Exec(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				inst.Recycle(outs)
			}
		})
	}
}
