package cli

// The tests run the command line with the example Go plugins compiled in,
// as cmd/dynop has them.
import (
	_ "github.com/dynop/dynop/plugins/greeter"
	_ "github.com/dynop/dynop/plugins/stats"
	_ "github.com/dynop/dynop/plugins/text"
	_ "github.com/dynop/dynop/plugins/vecmath/govecmath"
)
