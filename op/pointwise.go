package op

// Pointwise is implemented by an operator's [Impl] when each output
// element is a function of the input element at the same index alone:
// one input, one output of the same dtype, shape and layout, and no
// dependence on neighbours, position or other samples (brightness,
// gamma, thresholds, lookup tables).
//
// A graph pass may then fuse a chain of such operators into one node
// that walks the data once (graph.FusePass): for uint8 it applies each
// operator's function to the 256 values once and looks every element up
// in the resulting table; for float32 it copies a block of input
// elements into the output and applies each operator's function to the
// block while it is in cache. Run and the functions must therefore agree
// exactly: Run on a batch must give what the function gives applied to
// every element, in blocks of any length at any offset.
type Pointwise interface {
	Impl
	// Pointwise returns the functions that transform elements in place;
	// a nil field means the operator does not handle that dtype
	// pointwise, and a fusing pass then runs it unfused.
	Pointwise() PointwiseFuncs
}

// PointwiseFuncs are a [Pointwise] operator's element functions, one per
// dtype it handles. Each transforms v in place and must be safe to call
// from several goroutines at once.
type PointwiseFuncs struct {
	Uint8   func(v []uint8)
	Float32 func(v []float32)
}
