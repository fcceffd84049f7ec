package image

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"strings"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// crop is image.Crop: a box of each image, placed and sized as the
// package doc's Crop paragraph says.
type crop struct {
	x, y       int64 // the box's corner where hasX, hasY
	hasX, hasY bool
	posX, posY float64 // else its anchor, in [0, 1]
	w, h       int64   // the box's size where > 0
	relW, relH float64 // else its fraction of the image where > 0; else the whole side
	random     bool
	seed       int64
}

func newCrop(args *schema.Values) (op.Impl, error) {
	c := &crop{
		x: args.Int("x"), y: args.Int("y"), hasX: args.Has("x"), hasY: args.Has("y"),
		posX: args.Float("crop_pos_x"), posY: args.Float("crop_pos_y"),
		w: args.Int("width"), h: args.Int("height"), relW: args.Float("rel_width"), relH: args.Float("rel_height"),
		random: args.Bool("random"), seed: args.Int("seed"),
	}
	conflict := func(a, b, why string) error {
		return fmt.Errorf("%w: %s and %s %s: give one", schema.ErrArgument, a, b, why)
	}
	switch {
	case c.hasX && args.Has("crop_pos_x"):
		return nil, conflict("x", "crop_pos_x", "both place the box horizontally")
	case c.hasY && args.Has("crop_pos_y"):
		return nil, conflict("y", "crop_pos_y", "both place the box vertically")
	case args.Has("width") && args.Has("rel_width"):
		return nil, conflict("width", "rel_width", "both give the box's width")
	case args.Has("height") && args.Has("rel_height"):
		return nil, conflict("height", "rel_height", "both give the box's height")
	}
	if c.random {
		for _, name := range []string{"x", "y", "crop_pos_x", "crop_pos_y"} {
			if args.Has(name) {
				return nil, conflict("random", name, "both place the box (random draws its corner)")
			}
		}
	} else if args.Has("seed") {
		return nil, fmt.Errorf("%w: seed without random: true: seed is the random crop's; give random: true, or no seed", schema.ErrArgument)
	}
	return c, nil
}

// side returns the box's size along a side of n pixels.
func side(abs int64, rel float64, n int64) int64 {
	switch {
	case abs > 0:
		return abs
	case rel > 0:
		return max(1, int64(math.Round(rel*float64(n))))
	}
	return n
}

// size returns the box's width and height in an image of shape s, or an
// error naming the sizes if it does not fit (or, where x or y are
// given, if its corner leaves it outside).
func (c *crop) size(s []int64) (w, h int64, err error) {
	H, W := s[0], s[1]
	w, h = side(c.w, c.relW, W), side(c.h, c.relH, H)
	// Written so as not to overflow: x, y, width and height may be huge.
	if w > W || h > H || (c.hasX && c.x > W-w) || (c.hasY && c.y > H-h) {
		var box []string
		if c.hasX {
			box = append(box, fmt.Sprintf("x=%d", c.x))
		}
		if c.hasY {
			box = append(box, fmt.Sprintf("y=%d", c.y))
		}
		box = append(box, fmt.Sprintf("width=%d", w))
		if c.relW > 0 {
			box = append(box, fmt.Sprintf("(rel_width %g)", c.relW))
		}
		box = append(box, fmt.Sprintf("height=%d", h))
		if c.relH > 0 {
			box = append(box, fmt.Sprintf("(rel_height %g)", c.relH))
		}
		return 0, 0, fmt.Errorf("the box %s does not fit in the %dx%d (width x height) image", strings.Join(box, " "), W, H)
	}
	return w, h, nil
}

func (c *crop) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	shapes := make([][]int64, in.Len())
	for i, t := range in.Samples() {
		w, h, err := c.size(t.Shape())
		if err != nil {
			return nil, fmt.Errorf("%w: sample %d: %v", op.ErrInput, i, err)
		}
		shapes[i] = []int64{h, w, t.Shape()[2]}
	}
	return []op.OutputDesc{{DType: in.DType(), Layout: "HWC", Shapes: shapes}}, nil
}

func (c *crop) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.copyBox(outputs[0].Sample(i), t); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// copyBox copies the box out of HWC image t into out.
func (c *crop) copyBox(out, t *tensor.Tensor) error {
	s := t.Shape()
	w, h, err := c.size(s)
	if err != nil {
		return err
	}
	x, y := c.x, c.y
	switch {
	case c.random:
		if x, y, err = c.randomCorner(t, s[1]-w, s[0]-h); err != nil {
			return err
		}
	default:
		if !c.hasX {
			x = int64(math.Round(c.posX * float64(s[1]-w)))
		}
		if !c.hasY {
			y = int64(math.Round(c.posY * float64(s[0]-h)))
		}
	}
	box, err := t.Crop([]int64{y, x, 0}, []int64{h, w, s[2]})
	if err != nil {
		return err
	}
	return out.CopyFrom(box)
}

// castagnoli is CRC-32C's table (SSE 4.2 and ARMv8 compute it in
// hardware).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sampleHash is the CRC-32C of the sample's dtype name, its shape (each
// dimension as 8 bytes, little-endian) and its elements in row-major
// order, as stored (little-endian).
func sampleHash(t *tensor.Tensor) (uint32, error) {
	hdr := []byte(t.DType().String())
	for _, n := range t.Shape() {
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(n))
	}
	c, err := t.Contiguous()
	if err != nil {
		return 0, err
	}
	data, err := c.Bytes()
	if err != nil {
		return 0, err
	}
	return crc32.Update(crc32.Update(0, castagnoli, hdr), castagnoli, data), nil
}

// randomCorner draws a random crop's corner: x in [0, spareX] and y in
// [0, spareY], from the SplitMix64 stream started at seed XOR (hash <<
// 32), hash the sample's: the first value gives x, the second y, each
// as the high 64 bits of value × (spare + 1).
func (c *crop) randomCorner(t *tensor.Tensor, spareX, spareY int64) (x, y int64, err error) {
	hash, err := sampleHash(t)
	if err != nil {
		return 0, 0, err
	}
	state := uint64(c.seed) ^ uint64(hash)<<32
	xs, _ := bits.Mul64(splitMix64(&state), uint64(spareX)+1)
	ys, _ := bits.Mul64(splitMix64(&state), uint64(spareY)+1)
	return int64(xs), int64(ys), nil
}

// splitMix64 advances the SplitMix64 generator's state and returns its
// next value (Steele, Lea and Flood's constants).
func splitMix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
