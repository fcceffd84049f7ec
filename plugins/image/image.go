// Package image is dynop.plugin.image, a Go plugin of built-in image
// operators that run on the CPU:
//
//   - image.Read reads files into 1-D uint8 tensors of their bytes.
//   - image.Decode decodes PNG or JPEG bytes to uint8 HWC pixels, JPEGs
//     turned upright by their EXIF orientation.
//   - image.Encode encodes uint8 HWC pixels as PNG or JPEG bytes (uint16
//     ones as 16-bit PNG).
//   - image.Write writes 1-D uint8 tensors to files.
//   - image.ToFloat converts uint8 to float32, scaled.
//   - image.Grayscale turns RGB or RGBA pixels into luma.
//   - image.Crop copies a box out of HWC images.
//   - image.Flip mirrors HWC images left to right, top to bottom, or both.
//   - image.Resize resamples HWC images bilinearly.
//   - image.Adjust changes brightness and contrast.
//   - image.Gamma applies gamma correction.
//   - image.Invert inverts values, as in a photographic negative.
//
// Adjust, Gamma and Invert are pointwise ([op.Pointwise]): each output
// element depends on the input element at the same index alone, and a
// graph pass may fuse chains of them into one walk over the data.
//
// Importing the package registers the plugin with every dynop host the
// program opens ([plugin.Register]); [New] returns it for hosts that list
// their plugins themselves. Nothing runs until a host is asked for one of
// the operators: that starts the plugin, and closing the last instance
// lets it stop.
//
// # Formulas
//
// Grayscale, and Decode to one channel, compute luma after ITU-R BT.601
// with exactly these operations, so that other implementations can match
// them bit for bit:
//
//	uint8:   Y = (9798*R + 19235*G + 3735*B + 16384) >> 15     in uint32 (OpenCV's cvtColor)
//	float32: Y = 0.299f*R + 0.587f*G + 0.114f*B       in float32, each
//	                                                  product rounded, summed left to right
//
// Flip moves whole pixels, all channels together, of any dtype: output
// pixel (y, x) of an H×W image is input pixel (y, W-1-x) left to right,
// (H-1-y, x) top to bottom, (H-1-y, W-1-x) both, as cv2.flip does with
// flip codes 1, 0 and -1 (TestFlipMatchesOpenCV).
//
// Crop copies a box of w×h pixels, all channels, out of each HWC image
// of H×W, any dtype, into a contiguous output. Its size: width (height),
// else max(1, round(W·rel_width)) (H·rel_height), else the whole side.
// Its corner: x (y) where given; else, without random, round((W -
// w)·crop_pos_x) (round((H - h)·crop_pos_y)), both in float64 and
// rounded half away from zero ([math.Round]), so that the default 0.5
// centres the box and an odd margin puts the extra pixel before it, as
// DALI's crop does. A random crop (random: true) draws its corner
// uniformly from [0, W-w]×[0, H-h] with SplitMix64 started at seed XOR
// (hash << 32), hash the CRC-32C (Castagnoli) of the sample's dtype name
// ("uint8"), its shape (each dimension 8 bytes, little-endian) and its
// elements in row-major order as stored: the first value u gives x =
// ⌊u·(W-w+1) / 2^64⌋, the second y likewise. It depends on the seed and
// the sample alone, not on the worker, the batch or the sample's place in
// it, and it reads the whole sample once to hash it. Arguments that say
// the same thing twice are errors naming both: x with crop_pos_x, y with
// crop_pos_y, width with rel_width, height with rel_height, random with
// x, y, crop_pos_x or crop_pos_y, and seed without random; a box larger
// than the image, or whose corner leaves it outside, is an error naming
// the box's and the image's sizes. The box is the NumPy slice img[y:y+h,
// x:x+w] of the image, which OpenCV crops with (TestCropMatchesOpenCV).
//
// Resize interpolates bilinearly with half-pixel centres: output column x
// samples source column sx = (x+0.5)*inW/outW - 0.5, clamped to [0, inW-1]
// (and rows likewise), all in float32. With x0 = floor(sx), x1 =
// min(x0+1, inW-1) and f = sx-x0, lerp(a, b, f) = a + f*(b-a) (a if f is
// 0); each output value is lerp(lerp(p00, p01, fx), lerp(p10, p11, fx), fy).
// uint8 results are rounded to nearest, half up (v+0.5 truncated), and
// clamped to 0..255.
//
// Adjust, Gamma and Invert take uint8 on a 0..255 scale and float32 on a
// 0..1 scale. For uint8 each computes the 256 results once, when the
// operator is created, in float64 rounded half away from zero
// ([math.Round]); float32 results are not clamped. With c = contrast, b =
// brightness and g = gamma:
//
//	Adjust uint8:   y = clamp(round(c*(x-128) + 128 + b), 0, 255)   the product rounded before the sums
//	       float32: y = float32(c)*(x-0.5) + float32(0.5 + b/255)   in float32, the product rounded before
//	                                                                the sum; 0.5 + b/255 in float64
//	Gamma  uint8:   y = round(255 * (x/255)^(1/g))
//	       float32: y = float32(x^(1/g)) for x >= 0                  in float64, 1/g too
//	                y = x for x < 0 and for NaN
//	Invert uint8:   y = 255 - x
//	       float32: y = 1 - x
//
// # Errors
//
// Errors wrap [schema.ErrArgument] for arguments that no input could make
// right, [op.ErrInput] for inputs that do not fit the operator or its
// arguments, [ErrDecode], [ErrEncode] and [ErrChanged] for the operators'
// own failures, and the [os] errors of file operations (test them with
// [errors.Is] and [io/fs.ErrNotExist] and the like). Each names the sample
// it is about.
package image

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// ID is the plugin's ID.
const ID = "dynop.plugin.image"

// Errors of the operators themselves; test for them with [errors.Is].
var (
	// ErrDecode: image.Decode could not decode a sample: its format is
	// neither PNG nor JPEG, or its data is corrupt. The message names the
	// sample and has the decoder's own message.
	ErrDecode = errors.New("cannot decode image")
	// ErrEncode: image.Encode's encoder failed on a sample.
	ErrEncode = errors.New("cannot encode image")
	// ErrChanged: a file that image.Read sized in Setup has another size
	// when Run reads it.
	ErrChanged = errors.New("file changed since Setup")
)

// maxPixels is the most pixels an image that Decode or Resize produces may
// have (a 16384x16384 image); maxElements bounds the number of elements of
// one output sample of Resize (maxPixels of 4 channels). They keep an
// absurd argument or a forged header from allocating tens of gigabytes.
const (
	maxPixels   = 1 << 28
	maxElements = 4 * maxPixels
)

func init() { plugin.Register(New()) }

// New returns the plugin, for hosts opened with
// dynop.Options{NoRegistered: true, Plugins: ...}. Importing the package
// already registers it globally; two hosts may share one value.
func New() plugin.Plugin { return imagePlugin{} }

// imagePlugin is stateless: every operator instance keeps its own state.
type imagePlugin struct{}

func (imagePlugin) Info() schema.Plugin {
	ops := operators()
	schemas := make([]schema.Op, len(ops))
	for i, o := range ops {
		schemas[i] = o.schema
	}
	return schema.Plugin{
		ID:          ID,
		Version:     iface.V(1, 2, 0),
		Description: "Built-in image operators: read, decode (PNG, JPEG), encode, write, convert to float, grayscale, crop, resize, brightness and contrast, gamma and invert.",
		Author:      "dynop",
		Operators:   schemas,
	}
}

func (imagePlugin) Start(ctx context.Context, h plugin.Registrar) error {
	for _, o := range operators() {
		err := h.RegisterOperator(op.Operator{
			Schema:   o.schema,
			Backends: map[schema.Device]op.Factory{schema.CPU: o.factory},
		})
		if err != nil {
			return fmt.Errorf("image: %w", err)
		}
	}
	return nil
}

// operator is one row of the plugin's table: a schema and its CPU
// factory.
type operator struct {
	schema  schema.Op
	factory op.Factory
}

var (
	cpuOnly  = []schema.Device{schema.CPU}
	uint8In  = []tensor.DType{tensor.Uint8}
	pixelsIn = []tensor.DType{tensor.Uint8, tensor.Float32}
	hwc      = []string{"HWC"}
)

// operators returns the table from which both Info and Start read, so
// that they cannot disagree. It builds it afresh on every call: nobody
// who modifies what Info returns can change what a later call returns.
func operators() []operator {
	return []operator{
		{schema.Op{
			Name: "image.Read",
			Doc: "Reads files whole: one 1-D uint8 sample of each file's bytes, in the order of paths. " +
				"Setup sizes the files; Run reads them and fails if a size changed in between.",
			Outputs: []schema.Output{{Name: "data", Doc: "The bytes of each file, 1-D uint8.", DTypes: uint8In, NDim: 1}},
			Args: []schema.Arg{
				{Name: "paths", Type: schema.StringList, Required: true,
					Doc: "The files to read, one sample each; the batch has len(paths) samples."},
			},
			Devices: cpuOnly,
		}, newRead},
		{schema.Op{
			Name: "image.Decode",
			Doc: "Decodes PNG or JPEG images, told apart by their first bytes, to uint8 HWC pixels with the " +
				"given number of channels. Setup reads only the headers, to size the outputs; Run decodes.",
			Inputs: []schema.Input{{Name: "encoded", DTypes: uint8In, NDim: 1,
				Doc: "The bytes of a PNG or JPEG file, 1-D uint8."}},
			Outputs: []schema.Output{{Name: "images", Doc: "Decoded pixels, uint8 HWC.", DTypes: uint8In, Layout: "HWC", ChannelsArg: "channels"}},
			Args: []schema.Arg{
				{Name: "channels", Type: schema.Int, Default: int64(3), Allowed: []any{int64(1), int64(3), int64(4)},
					Doc: "Channels of the output: 1 for luma (BT.601, as image.Grayscale computes it), " +
						"3 for RGB, 4 for RGBA with straight (not premultiplied) alpha."},
				{Name: "orientation", Type: schema.Bool, Default: true,
					Doc: "Apply a JPEG's EXIF orientation (1-8), turning and mirroring the image upright; malformed EXIF is ignored."},
			},
			Devices: cpuOnly,
		}, newDecode},
		{schema.Op{
			Name: "image.Encode",
			Doc: "Encodes uint8 HWC images with 1 (gray), 3 (RGB) or 4 (RGBA, straight alpha) channels as PNG or JPEG. " +
				"The encoded size is known only once encoded, so Setup encodes each sample into a buffer the " +
				"instance keeps and Run copies the bytes out: the output encodes the pixels as Setup saw them.",
			Inputs: []schema.Input{{Name: "images", DTypes: []tensor.DType{tensor.Uint8, tensor.Uint16}, Layouts: hwc, Channels: []int{1, 3, 4},
				Doc: "Pixels, HWC with 1, 3 or 4 channels: uint8, or uint16 for 16-bit PNG."}},
			Outputs: []schema.Output{{Name: "encoded", Doc: "The encoded file's bytes, 1-D uint8.", DTypes: uint8In, NDim: 1}},
			Args: []schema.Arg{
				{Name: "format", Type: schema.String, Default: "png", Allowed: []any{"png", "jpeg"},
					Doc: "The file format; JPEG has no alpha and drops the fourth channel."},
				{Name: "quality", Type: schema.Int, Default: int64(90), Min: schema.Bounds(1), Max: schema.Bounds(100),
					Doc: "JPEG quality, 1 (smallest) to 100 (best); PNG ignores it."},
			},
			Devices: cpuOnly,
		}, newEncode},
		{schema.Op{
			Name: "image.Write",
			Doc: "Writes each sample's bytes to a file dir/name, creating dir if need be. " +
				"Each file is written to a temporary file in dir and renamed into place, so a reader sees " +
				"the old file or the whole new one, never part of it.",
			Inputs: []schema.Input{{Name: "data", DTypes: uint8In, NDim: 1,
				Doc: "The bytes to write, 1-D uint8, such as image.Encode's output."}},
			Args: []schema.Arg{
				{Name: "dir", Type: schema.String, Required: true, Doc: "The directory to write into."},
				{Name: "names", Type: schema.StringList, Required: true,
					Doc: "One file name per sample, in order: plain names, without path separators, distinct."},
			},
			Devices: cpuOnly,
		}, newWrite},
		{schema.Op{
			Name:    "image.ToFloat",
			Doc:     "Converts uint8 elements to float32 value*scale, keeping shape and layout.",
			Inputs:  []schema.Input{{Name: "input", DTypes: uint8In, Doc: "uint8 tensors of any shape and layout."}},
			Outputs: []schema.Output{{Name: "output", Doc: "float32 tensors of the input's shape and layout.", Like: "input", DTypes: []tensor.DType{tensor.Float32}}},
			Args: []schema.Arg{
				{Name: "scale", Type: schema.Float, Default: 1.0 / 255,
					Doc: "The factor each value is multiplied by (in float64, rounded once to float32); " +
						"the default maps 0..255 to 0..1."},
			},
			Devices: cpuOnly,
		}, newToFloat},
		{schema.Op{
			Name: "image.Grayscale",
			Doc: "Computes BT.601 luma of RGB or RGBA pixels (alpha ignored): " +
				"uint8 Y = (9798*R + 19235*G + 3735*B + 16384) >> 15, float32 Y = 0.299*R + 0.587*G + 0.114*B.",
			Inputs: []schema.Input{{Name: "images", DTypes: pixelsIn, Layouts: hwc, Channels: []int{3, 4},
				Doc: "uint8 or float32 HWC pixels with 3 (RGB) or 4 (RGBA) channels."}},
			Outputs: []schema.Output{{Name: "gray", Doc: "Luma, HWC with one channel, of the input's dtype.", Like: "images", Layout: "HWC", Channels: 1}},
			Devices: cpuOnly,
		}, newGrayscale},
		{schema.Op{
			Name: "image.Crop",
			Doc: "Copies a box of every channel out of HWC images: at x, y, or anchored by crop_pos_x and crop_pos_y " +
				"(centred by default), or at a random corner drawn from seed and the sample; width x height pixels, or " +
				"rel_width and rel_height of the image, or the whole side. The box must lie inside each image.",
			Inputs:  []schema.Input{{Name: "images", Layouts: hwc, Doc: "HWC images of any dtype."}},
			Outputs: []schema.Output{{Name: "cropped", Doc: "The boxes, HWC of shape [height, width, C], contiguous.", Like: "images", Layout: "HWC", Channels: schema.ChannelsLike}},
			Args: []schema.Arg{
				{Name: "x", Type: schema.Int, Min: schema.Bounds(0),
					Doc: "Left column of the box; without it, crop_pos_x places the box (or random)."},
				{Name: "y", Type: schema.Int, Min: schema.Bounds(0),
					Doc: "Top row of the box; without it, crop_pos_y places the box (or random)."},
				{Name: "width", Type: schema.Int, Min: schema.Bounds(1),
					Doc: "Columns in the box; without it or rel_width, the image's width."},
				{Name: "height", Type: schema.Int, Min: schema.Bounds(1),
					Doc: "Rows in the box; without it or rel_height, the image's height."},
				{Name: "crop_pos_x", Type: schema.Float, Default: 0.5, Min: schema.Bounds(0), Max: schema.Bounds(1),
					Doc: "Where the box lies across the image when x is not given: its left column is " +
						"round((W - width) * crop_pos_x), half away from zero; 0 at the left edge, 1 at the right."},
				{Name: "crop_pos_y", Type: schema.Float, Default: 0.5, Min: schema.Bounds(0), Max: schema.Bounds(1),
					Doc: "Where the box lies down the image when y is not given: its top row is " +
						"round((H - height) * crop_pos_y), half away from zero; 0 at the top, 1 at the bottom."},
				{Name: "rel_width", Type: schema.Float, Min: schema.Bounds(0), MinExclusive: true, Max: schema.Bounds(1),
					Doc: "The box's width as a fraction of the image's, instead of width: max(1, round(W * rel_width))."},
				{Name: "rel_height", Type: schema.Float, Min: schema.Bounds(0), MinExclusive: true, Max: schema.Bounds(1),
					Doc: "The box's height as a fraction of the image's, instead of height: max(1, round(H * rel_height))."},
				{Name: "random", Type: schema.Bool, Default: false,
					Doc: "Draw the box's corner uniformly where the box fits, from seed and a hash of the sample: " +
						"the same seed and image give the same box in any batch, at any position, on any worker."},
				{Name: "seed", Type: schema.Int, Default: int64(0),
					Doc: "The seed of random crops (only with random)."},
			},
			Devices: cpuOnly,
		}, newCrop},
		{schema.Op{
			Name: "image.Flip",
			Doc: "Mirrors HWC images of any dtype left to right (horizontal), top to bottom (vertical), or both: " +
				"output pixel (y, x) is input pixel (y, W-1-x), (H-1-y, x) or (H-1-y, W-1-x); with neither, a copy.",
			Inputs:  []schema.Input{{Name: "images", Layouts: hwc, Doc: "HWC images of any dtype."}},
			Outputs: []schema.Output{{Name: "flipped", Doc: "The images mirrored, of the input's shape and dtype, contiguous.", Like: "images", Layout: "HWC", Channels: schema.ChannelsLike}},
			Args: []schema.Arg{
				{Name: "horizontal", Type: schema.Bool, Default: true, Doc: "Mirror left to right."},
				{Name: "vertical", Type: schema.Bool, Default: false, Doc: "Mirror top to bottom."},
			},
			Devices: cpuOnly,
		}, newFlip},
		{schema.Op{
			Name: "image.Resize",
			Doc: "Resizes HWC images bilinearly, with half-pixel centres and the border replicated, computing in float32; " +
				"uint8 results are rounded to nearest. The output has at most 2^28 pixels.",
			Inputs: []schema.Input{{Name: "images", DTypes: pixelsIn, Layouts: hwc,
				Doc: "uint8 or float32 HWC images, not empty."}},
			Outputs: []schema.Output{{Name: "resized", Doc: "HWC images of shape [height, width, C], of the input's dtype.", Like: "images", Layout: "HWC", Channels: schema.ChannelsLike}},
			Args: []schema.Arg{
				{Name: "width", Type: schema.Int, Required: true, Min: schema.Bounds(1), Max: schema.Bounds(65536),
					Doc: "Columns of the output."},
				{Name: "height", Type: schema.Int, Required: true, Min: schema.Bounds(1), Max: schema.Bounds(65536),
					Doc: "Rows of the output."},
			},
			Devices: cpuOnly,
		}, newResize},
		{schema.Op{
			Name: "image.Adjust",
			Doc: "Changes contrast and brightness, element by element: uint8 y = clamp(round(contrast*(x-128) + 128 + brightness), 0, 255), " +
				"rounded half away from zero; float32 (0..1 scale) y = contrast*(x-0.5) + 0.5 + brightness/255, not clamped.",
			Inputs: []schema.Input{{Name: "images", DTypes: pixelsIn,
				Doc: "uint8 (0..255) or float32 (0..1) tensors of any shape and layout."}},
			Outputs: []schema.Output{{Name: "adjusted", Doc: "The adjusted values, of the input's dtype, shape and layout.", Like: "images", Channels: schema.ChannelsLike}},
			Args: []schema.Arg{
				{Name: "contrast", Type: schema.Float, Default: 1.0, Min: schema.Bounds(0), Max: schema.Bounds(100),
					Doc: "The factor by which values move away from mid-grey (128, or 0.5 for float32): " +
						"0 makes everything grey, 1 keeps the contrast."},
				{Name: "brightness", Type: schema.Float, Default: 0.0, Min: schema.Bounds(-255), Max: schema.Bounds(255),
					Doc: "What is added after the contrast, in uint8 units: float32 values get brightness/255."},
			},
			Devices: cpuOnly,
		}, newAdjust},
		{schema.Op{
			Name: "image.Gamma",
			Doc: "Applies gamma correction, element by element: uint8 y = round(255 * (x/255)^(1/gamma)); " +
				"float32 (0..1 scale) y = x^(1/gamma) for x >= 0, negative values and NaN unchanged.",
			Inputs: []schema.Input{{Name: "images", DTypes: pixelsIn,
				Doc: "uint8 (0..255) or float32 (0..1) tensors of any shape and layout."}},
			Outputs: []schema.Output{{Name: "corrected", Doc: "The corrected values, of the input's dtype, shape and layout.", Like: "images", Channels: schema.ChannelsLike}},
			Args: []schema.Arg{
				{Name: "gamma", Type: schema.Float, Default: 1.0, Min: schema.Bounds(0.01), Max: schema.Bounds(100),
					Doc: "The gamma: above 1 brightens the mid-tones, below 1 darkens them, 1 changes nothing."},
			},
			Devices: cpuOnly,
		}, newGamma},
		{schema.Op{
			Name: "image.Invert",
			Doc:  "Inverts values, as in a photographic negative: uint8 y = 255 - x, float32 (0..1 scale) y = 1 - x.",
			Inputs: []schema.Input{{Name: "images", DTypes: pixelsIn,
				Doc: "uint8 (0..255) or float32 (0..1) tensors of any shape and layout."}},
			Outputs: []schema.Output{{Name: "inverted", Doc: "The inverted values, of the input's dtype, shape and layout.", Like: "images", Channels: schema.ChannelsLike}},
			Devices: cpuOnly,
		}, newInvert},
	}
}

// elems returns t's elements in row-major order: t's own memory if t is
// contiguous, a compact copy if t is a strided view.
func elems[T tensor.Number](t *tensor.Tensor) ([]T, error) {
	c, err := t.Contiguous()
	if err != nil {
		return nil, err
	}
	return tensor.Values[T](c)
}

// fill calls f with the elements of output sample out, to write them.
// An Instance hands its operators contiguous outputs only.
func fill[T tensor.Number](out *tensor.Tensor, f func([]T) error) error {
	v, err := tensor.Values[T](out)
	if err != nil {
		return err
	}
	return f(v)
}

// dims returns the height, width and channels of an HWC sample.
func dims(t *tensor.Tensor) (h, w, c int) {
	s := t.Shape()
	return int(s[0]), int(s[1]), int(s[2])
}

// luma8 is BT.601 luma of 8-bit RGB, exactly as the package doc says.
func luma8(r, g, b uint8) uint8 {
	return uint8((9798*uint32(r) + 19235*uint32(g) + 3735*uint32(b) + 16384) >> 15)
}

// luma32 is BT.601 luma of float32 RGB. The conversions round each
// product to float32, which the Go spec says forbids fusing it with the
// addition into a multiply-add: the result is the same on every
// architecture, and the same as C's 0.299f*r + 0.587f*g + 0.114f*b
// compiled without contraction.
func luma32(r, g, b float32) float32 {
	return float32(float32(0.299)*r) + float32(float32(0.587)*g) + float32(float32(0.114)*b)
}
