package graph

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// FuseDesc describes the pass [FusePass] returns, under which hosts
// register it.
var FuseDesc = schema.Pass{
	Name:     "dynop.fuse-pointwise",
	Kind:     schema.Partition,
	Priority: 100,
	Doc:      "Fuses chains of pointwise operators into one node that walks the data once.",
}

// fuseBlock is how many elements a fused node transforms at a time: a
// block of every stage stays in the first-level cache.
const fuseBlock = 8 << 10

// FusePass returns a partition pass that groups every chain of two or
// more pointwise operators (whose instances implement [op.Pointwise]),
// each feeding only the next, into one node named after its members
// ("adjust+gamma"). The group's executor walks each sample once: a
// uint8 chain's stages are composed into one table of 256 entries and
// the walk is one lookup per element; a float32 chain goes in blocks of
// 8192 elements, copying a block of the input into the output and
// applying every stage's element function to it while it is in cache.
// The intermediate batches are never allocated, and the output's memory
// is reused once the graph hands it back (the nodes that read it have
// run, or [Graph.Recycle]); the walk keeps none of its input, so the
// node before the chain gets its output back as it would from an
// operator. If an input's dtype has no element function in some stage,
// the group runs its nodes one after another instead, with the same
// result.
//
// On the demo pipeline's chain (image.Adjust, image.Gamma, image.Invert
// on its 320x240 gray images) the walk is 5 to 7 times as fast as the
// three nodes (BenchmarkDemoChain in package pipeline), so the pass is
// on by default; graphs without such a chain are left as they are.
func FusePass() PartitionPass {
	return PartitionFunc(func(ctx context.Context, b *Builder, g *Graph) error {
		for _, chain := range pointwiseChains(g) {
			names := make([]string, len(chain))
			for i, n := range chain {
				names[i] = n.name
			}
			if err := b.Group(strings.Join(names, "+"), chain, &fused{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// pointwiseChains returns g's maximal chains of linked pointwise nodes
// with two or more members.
func pointwiseChains(g *Graph) [][]*Node {
	users := map[*Node]int{} // data consumers, order dependents and graph outputs of each node
	next := map[*Node]*Node{}
	for _, n := range g.nodes {
		for _, p := range n.ins {
			users[p.Node]++
			next[p.Node] = n
		}
		for _, d := range n.after {
			users[d]++
		}
	}
	for _, o := range g.outputs {
		users[o.port.Node]++
	}
	linked := func(a, b *Node) bool { // a feeds b alone and both are pointwise
		return b != nil && users[a] == 1 && pointwise(a) && pointwise(b) && b.ins[0].Node == a
	}
	var chains [][]*Node
	for _, n := range g.nodes {
		if !pointwise(n) || linked(n.ins[0].Node, n) {
			continue // not a chain's first node
		}
		chain := []*Node{n}
		for c := n; linked(c, next[c]); c = next[c] {
			chain = append(chain, next[c])
		}
		if len(chain) > 1 {
			chains = append(chains, chain)
		}
	}
	return chains
}

// pointwise reports whether n runs a pointwise operator on one input.
func pointwise(n *Node) bool {
	d, ok := n.def.(*OperatorDef)
	if !ok || len(n.ins) != 1 || len(n.after) != 0 {
		return false
	}
	_, ok = d.Instance.Impl().(op.Pointwise)
	return ok
}

// fused is the executor of a fused chain. It keeps the memory of the
// outputs its graph hands back once nothing reads them any more (see
// recycle), and the next walks write into it instead of allocating.
type fused struct {
	mu sync.Mutex
	// last is the output of the last walk, until it is handed back;
	// only it is taken back, so no memory is reused twice or comes from
	// elsewhere.
	last *tensor.Batch
	// spare are the samples of outputs handed back, oldest first; there
	// are never more than keep, the most samples one walk has made.
	spare []*tensor.Tensor
	keep  int
}

func (f *fused) execute(ctx context.Context, s *schedule) (err error) {
	in := s.inputs[0]
	n := s.size()
	// The element functions are plugin code that runs outside the
	// instances' guards: a panic becomes the error of the stage that
	// panicked, or of the last stage during the walk.
	stage := n - 1
	defer func() {
		if r := recover(); r != nil {
			err = s.fail(s.node(stage), fmt.Errorf("%w: fused walk: %v\n%s", errdefs.ErrPanic, r, debug.Stack()))
		}
	}()
	funcs := make([]op.PointwiseFuncs, n)
	var desc op.OutputDesc
	for i := range n {
		stage = i
		inst := s.node(i).def.(*OperatorDef).Instance
		// Every stage sees the input's metadata: a pointwise operator's
		// output has its input's dtype, shape and layout.
		descs, err := inst.Setup([]*tensor.Batch{in})
		if err != nil {
			return s.fail(s.node(i), err)
		}
		desc = descs[0]
		funcs[i] = inst.Impl().(op.Pointwise).Pointwise()
	}
	var walk func(dst, src *tensor.Tensor) error
	switch in.DType() {
	case tensor.Uint8:
		walk = lutWalker(funcs, &stage)
	case tensor.Float32:
		walk = floatWalker(funcs)
	}
	if walk == nil {
		return Serial{}.execute(ctx, s)
	}
	stage = n - 1
	out, err := f.alloc(desc)
	if err != nil {
		return s.fail(s.node(n-1), err)
	}
	for k := range in.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := walk(out.Sample(k), in.Sample(k)); err != nil {
			return s.fail(s.node(n-1), err)
		}
	}
	for i := range n - 1 {
		s.setOutputs(i, nil)
	}
	s.setOutputs(n-1, []*tensor.Batch{out})
	return nil
}

// alloc returns an output batch as d describes, its samples over the
// memory of spares where one has the sample's dtype and number of
// elements, new otherwise. The walk writes every element, so a spare is
// not cleared.
func (f *fused) alloc(d op.OutputDesc) (*tensor.Batch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keep = max(f.keep, len(d.Shapes))
	samples := make([]*tensor.Tensor, len(d.Shapes))
	for j, shape := range d.Shapes {
		var err error
		if samples[j], err = f.take(d.DType, d.Layout, shape); err != nil {
			return nil, fmt.Errorf("output sample %d: %w", j, err)
		}
	}
	out, err := tensor.NewBatch(samples...)
	if err != nil {
		return nil, err
	}
	f.last = out
	return out, nil
}

// take returns a tensor over the memory of the first spare of dtype dt
// with as many elements as shape, or a new zeroed one. f.mu is held.
func (f *fused) take(dt tensor.DType, layout string, shape []int64) (*tensor.Tensor, error) {
	n := int64(1)
	for _, x := range shape {
		n *= x
	}
	for k, t := range f.spare {
		if t.DType() != dt || t.NumElements() != n {
			continue
		}
		f.spare = slices.Delete(f.spare, k, k+1)
		if slices.Equal(t.Shape(), shape) && t.Layout() == layout {
			return t, nil
		}
		r, err := t.Reshape(shape...)
		if err == nil {
			r, err = r.WithLayout(layout)
		}
		if err == nil {
			return r, nil
		}
	}
	t, err := tensor.New(dt, shape...)
	if err != nil {
		return nil, err
	}
	return t.WithLayout(layout)
}

// recycle takes back outs, the outputs of the fused node, if they are
// those of its last walk: the graph calls it once nothing reads them any
// more. It may be called from any goroutine.
func (f *fused) recycle(outs []*tensor.Batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(outs) != 1 || outs[0] == nil || outs[0] != f.last {
		return
	}
	f.last = nil
	for _, t := range outs[0].Samples() {
		if t.IsContiguous() && t.Device().Type == tensor.CPU {
			f.spare = append(f.spare, t)
		}
	}
	if drop := len(f.spare) - f.keep; drop > 0 {
		f.spare = slices.Delete(f.spare, 0, drop)
	}
}

// floatWalker returns the walk of a float32 chain, or nil if a stage has
// no float32 function: blocks of fuseBlock elements go through every
// stage while they are in cache.
func floatWalker(funcs []op.PointwiseFuncs) func(dst, src *tensor.Tensor) error {
	stages := make([]func([]float32), len(funcs))
	for i, f := range funcs {
		if stages[i] = f.Float32; stages[i] == nil {
			return nil
		}
	}
	return func(dst, src *tensor.Tensor) error {
		d, s, err := elements[float32](dst, src)
		if err != nil {
			return err
		}
		for off := 0; off < len(d); off += fuseBlock {
			block := d[off:min(off+fuseBlock, len(d))]
			if s != nil {
				copy(block, s[off:])
			}
			for _, f := range stages {
				f(block)
			}
		}
		return nil
	}
}

// elements returns the elements of dst and of src. A strided src is
// copied into dst first, and s is then nil: dst holds the input.
func elements[T tensor.Number](dst, src *tensor.Tensor) (d, s []T, err error) {
	if d, err = tensor.Values[T](dst); err != nil {
		return nil, nil, err
	}
	if !src.IsContiguous() {
		return d, nil, dst.CopyFrom(src)
	}
	s, err = tensor.Values[T](src)
	return d, s, err
}

// lutWalker returns the walk of a uint8 chain, or nil if a stage has no
// uint8 function. A pointwise function of a uint8 is a table of 256
// entries, so the chain's stages applied to the table 0..255 give one
// table for the whole chain: the walk is a single lookup per element.
func lutWalker(funcs []op.PointwiseFuncs, stage *int) func(dst, src *tensor.Tensor) error {
	for _, f := range funcs {
		if f.Uint8 == nil {
			return nil
		}
	}
	var lut [256]uint8
	for i := range lut {
		lut[i] = uint8(i)
	}
	for i, f := range funcs {
		*stage = i
		f.Uint8(lut[:])
	}
	return func(dst, src *tensor.Tensor) error {
		d, s, err := elements[uint8](dst, src)
		if err != nil {
			return err
		}
		if s == nil {
			s = d
		}
		lookup(d, s, &lut)
		return nil
	}
}

// lookup sets d[i] to t[s[i]] for every i; s may be d. It goes eight
// elements at a time, the group's loads before its stores: a plain
// loop, which stores each element before it loads the next, took twice
// as long on the benchmark machine (2 AMD EPYC cores).
func lookup(d, s []uint8, t *[256]uint8) {
	s = s[:len(d)]
	n := len(d) &^ 7
	for i := 0; i < n; i += 8 {
		in, out := s[i:i+8:i+8], d[i:i+8:i+8]
		out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7] =
			t[in[0]], t[in[1]], t[in[2]], t[in[3]], t[in[4]], t[in[5]], t[in[6]], t[in[7]]
	}
	for i := n; i < len(d); i++ {
		d[i] = t[s[i]]
	}
}
