package goplugin_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/docs/authoring/goplugin"
)

// A host program compiled with the plugin: acquiring its interface starts
// dynop.plugin.text, then acme.plugin.shout; releasing the reference
// stops them in the opposite order.
func Example() {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // no time stamps: the output is compared
			}
			return a
		},
	}))
	h, err := dynop.Open(ctx, dynop.Options{NoDefaultPaths: true, NoCache: true, Logger: log})
	if err != nil {
		panic(err)
	}
	defer h.Close(ctx)

	s, ref, err := dynop.Acquire(ctx, h, goplugin.ID, goplugin.Interface)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Shout("hello"))
	if err := ref.Release(); err != nil {
		panic(err)
	}
	// Output:
	// level=INFO msg=Start plugin=acme.plugin.shout
	// level=INFO msg=Started plugin=acme.plugin.shout
	// HELLO!
	// level=INFO msg=CanUnload plugin=acme.plugin.shout
	// level=INFO msg=Stop plugin=acme.plugin.shout
	// level=INFO msg=Unload plugin=acme.plugin.shout
}
