package graph

import (
	"context"
)

// OperatorPopulate returns the default populate pass: it instantiates
// the operator named by the node's kind with the node's args, on the
// node's device, from the build's operator registry
// ([BuildOptions.Operators]) and attaches it ([Builder.SetOperator]).
// The graph closes the instance when it closes, which lets the
// operator's plugin stop.
func OperatorPopulate() PopulatePass {
	return PopulateFunc(func(ctx context.Context, b *Builder, n *Node) error {
		return b.SetOperator(ctx, n, n.Kind(), n.Args)
	})
}
