package image_test

import (
	"bytes"
	"context"
	"fmt"
	stdimage "image"
	"image/color"
	"image/png"
	"log"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Decoding an in-memory PNG and turning it gray. Importing the package is
// enough for a host opened with dynop.Options{} to know the plugin; this
// host lists it explicitly.
func Example() {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{image.New()}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	// A PNG of one row: red, green, blue, white.
	src := stdimage.NewNRGBA(stdimage.Rect(0, 0, 4, 1))
	for x, c := range []color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}} {
		src.SetNRGBA(x, 0, c)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, src); err != nil {
		log.Fatal(err)
	}
	file, err := tensor.FromSlice(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	files, err := tensor.NewBatch(file)
	if err != nil {
		log.Fatal(err)
	}

	// The first NewOperator starts the plugin; closing the last instance
	// lets it stop.
	decode, err := h.NewOperator(ctx, "image.Decode", schema.Args{"channels": 3})
	if err != nil {
		log.Fatal(err)
	}
	defer decode.Close()
	gray, err := h.NewOperator(ctx, "image.Grayscale", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer gray.Close()

	pixels, err := decode.Exec(ctx, files)
	if err != nil {
		log.Fatal(err)
	}
	luma, err := gray.Exec(ctx, pixels[0])
	if err != nil {
		log.Fatal(err)
	}
	y := luma[0].Sample(0)
	v, err := tensor.Values[uint8](y)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pixels[0].Sample(0))
	fmt.Println(y, v)
	// Output:
	// tensor(uint8 [1 4 3] HWC cpu)
	// tensor(uint8 [1 4 1] HWC cpu) [76 150 29 255]
}
