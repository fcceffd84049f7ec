package tensor_test

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"

	"github.com/dynop/dynop/tensor"
)

func ExampleFromSlice() {
	pixels := []uint8{
		1, 2, 3,
		4, 5, 6,
	}
	t, err := tensor.FromSlice(pixels, 2, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(t, t.Strides())

	// A view of the middle column shares the slice's memory.
	col, _ := t.Slice(1, 1, 2)
	fmt.Println(col, col.Strides(), col.IsContiguous())

	// Contiguous copies it into compact memory.
	c, _ := col.Contiguous()
	v, _ := tensor.Values[uint8](c)
	fmt.Println(v)

	// Writing through the tensor writes the slice.
	all, _ := tensor.Values[uint8](t)
	all[0] = 100
	fmt.Println(pixels)
	// Output:
	// tensor(uint8 [2 3] cpu) [3 1]
	// tensor(uint8 [2 1] cpu) [3 1] false
	// [2 5]
	// [100 2 3 4 5 6]
}

func ExampleFromImage() {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	t, err := tensor.FromImage(img)
	if err != nil {
		panic(err)
	}
	fmt.Println(t)

	// Planar channels, as many models want them: a view, not a copy.
	chw, _ := t.Permute(2, 0, 1)
	fmt.Println(chw, chw.Strides())

	// The tensor shares the image's pixels.
	b, _ := t.Bytes()
	copy(b, []byte{255, 0, 0, 255})
	fmt.Println(img.At(0, 0))

	// And a crop of the tensor is an image again, still sharing them.
	crop, _ := t.Crop([]int64{0, 0, 0}, []int64{2, 2, 4})
	back, _ := crop.Image()
	fmt.Println(back.Bounds(), back.At(0, 0) == color.RGBA{R: 255, A: 255})
	// Output:
	// tensor(uint8 [3 4 4] HWC cpu)
	// tensor(uint8 [4 3 4] CHW cpu) [1 16 4]
	// {255 0 0 255}
	// (0,0)-(2,2) true
}

func ExampleNewBatch() {
	small, _ := tensor.New(tensor.Uint8, 240, 320, 3)
	large, _ := tensor.New(tensor.Uint8, 480, 640, 3)
	batch, err := tensor.NewBatch(small, large)
	if err != nil {
		panic(err)
	}
	fmt.Println(batch)
	fmt.Println(batch.Len(), batch.DType(), batch.IsUniform(), batch.Shapes())

	// Samples must agree in dtype, and the error says which does not.
	scores, _ := tensor.New(tensor.Float32, 10)
	_, err = tensor.NewBatch(small, large, scores)
	fmt.Println(err)
	// Output:
	// batch(2 samples, uint8 cpu: [240 320 3] [480 640 3])
	// 2 uint8 false [[240 320 3] [480 640 3]]
	// tensor: batch sample 2 has dtype float32, sample 0 has uint8
}

func ExampleParseDType() {
	dt, _ := tensor.ParseDType("float32x4")
	fmt.Println(dt.Code == tensor.Float, dt.Bits, dt.Lanes, dt.Size())

	// DTypes read and write as their names in JSON.
	b, _ := json.Marshal(map[string]tensor.DType{"input": tensor.Uint8})
	fmt.Println(string(b))

	_, err := tensor.ParseDType("double")
	fmt.Println(err)
	// Output:
	// true 32 4 16
	// {"input":"uint8"}
	// tensor: unknown dtype "double" (known: int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, bfloat16, complex64, complex128, bool; xN appended for N lanes, as in float32x4)
}
