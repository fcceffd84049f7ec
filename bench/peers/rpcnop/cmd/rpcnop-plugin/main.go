// Command rpcnop-plugin is the plugin of the github.com/hashicorp/go-plugin
// peer in the call-overhead benchmark: it serves an rpcnop.Nop whose Nop does
// nothing, over net/rpc. The host starts it; run by hand, it refuses.
//
// It logs nothing, so that a benchmark's output is not flooded with
// go-plugin's logs.
package main

import (
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/dynop/dynop/bench/peers/rpcnop"
)

// nop is the implementation served.
type nop struct{}

// Nop does nothing.
func (nop) Nop() error { return nil }

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: rpcnop.Handshake,
		Plugins: map[string]plugin.Plugin{
			rpcnop.Name: &rpcnop.NopPlugin{Impl: nop{}},
		},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:   "rpcnop-plugin",
			Output: io.Discard,
			Level:  hclog.Off,
		}),
	})
}
