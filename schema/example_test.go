package schema_test

import (
	"errors"
	"fmt"

	"github.com/dynop/dynop/schema"
)

// Arguments are checked against the schema before any operator code
// runs: a misspelt name gets a "did you mean", and every problem is
// reported at once.
func ExampleOp_Check() {
	scale := schema.Op{Name: "example.Scale", Inputs: []schema.Input{{Name: "x"}}, Outputs: []schema.Output{{Name: "y"}}}
	scale.Args = []schema.Arg{
		{Name: "factor", Type: schema.Float, Required: true, Max: schema.Bounds(100)},
		{Name: "offset", Type: schema.Float, Default: 0.0},
		{Name: "mode", Type: schema.String, Default: "fast", Allowed: []any{"fast", "exact"}},
	}
	_, err := scale.Check(schema.Args{"factr": 2, "mode": "slow"}, nil)
	fmt.Println(errors.Is(err, schema.ErrArgument))
	fmt.Println(err)

	v, err := scale.Check(schema.Args{"factor": 3}, nil)
	fmt.Println(v.Float("factor"), v.Float("offset"), v.String("mode"), err)
	// Output:
	// true
	// invalid operator argument: operator "example.Scale": argument "factr": unknown argument; did you mean "factor"?
	// invalid operator argument: operator "example.Scale": argument "mode": slow is not one of [fast exact]
	// invalid operator argument: operator "example.Scale": argument "factor": required (float) but not given
	// 3 0 fast <nil>
}
