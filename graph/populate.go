package graph

import (
	"context"
	"errors"

	"github.com/dynop/dynop/op"
)

// OperatorPopulate returns the default populate pass: it instantiates
// the operator named by the node's kind from reg, with the node's args
// on the node's device, and attaches it as an [OperatorDef]. The graph
// closes the instance when it closes, which lets the operator's plugin
// stop.
func OperatorPopulate(reg *op.Registry) PopulatePass {
	return PopulateFunc(func(ctx context.Context, b *Builder, n *Node) error {
		var opts []op.Option
		if n.Device != "" {
			opts = append(opts, op.OnDevice(n.Device))
		}
		in, err := reg.New(ctx, n.Kind(), n.Args, opts...)
		if err != nil {
			return err
		}
		if err := b.SetDefinition(n, Operator(in)); err != nil {
			return errors.Join(err, in.Close())
		}
		return nil
	})
}
