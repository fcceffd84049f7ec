package native_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/vecmath"
)

// A host program loads a native plugin from its file and calls it through
// the typed binding of its interface. (make plugins builds the library.)
func Example() {
	ctx := context.Background()
	p, err := native.Load(ctx, "plugins/vecmath/libdynop_vecmath.so", native.Options{})
	if err != nil {
		log.Fatal(err) // the error says what is wrong with the file
	}
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{p}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface) // dlopen, register
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Dot([]float32{1, 2, 3}, []float32{4, 5, 6}))
	ref.Release() // deregister, dlclose
}
