// Package rpcnop is the contract between the host and the plugin of the
// github.com/hashicorp/go-plugin peer in the call-overhead benchmark: an
// interface with one empty method, Nop, served over go-plugin's net/rpc
// transport by the command rpcnop-plugin.
package rpcnop

import (
	"net/rpc"

	"github.com/hashicorp/go-plugin"
)

// Name is the name the plugin is served and dispensed under.
const Name = "nop"

// Handshake is the handshake the host and the plugin must agree on. The
// cookie only keeps the plugin binary from being run by hand; it is not
// security.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "DYNOP_BENCH_RPCNOP_PLUGIN",
	MagicCookieValue: "c0ffee-nop",
}

// PluginMap is the set of plugins the host dispenses from and the plugin
// serves: Nop under Name.
var PluginMap = map[string]plugin.Plugin{
	Name: &NopPlugin{},
}

// Nop is the interface the plugin implements: one method that does
// nothing, whose cost is that of the transport.
type Nop interface {
	Nop() error
}

// NopPlugin is the go-plugin Plugin for Nop over net/rpc. Impl is the
// implementation served; only the plugin's side sets it.
type NopPlugin struct {
	Impl Nop
}

// Server returns the RPC server that serves p.Impl, on the plugin's side.
func (p *NopPlugin) Server(*plugin.MuxBroker) (any, error) {
	return &RPCServer{Impl: p.Impl}, nil
}

// Client returns a Nop that calls the plugin over c, on the host's side.
func (*NopPlugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &RPCClient{client: c}, nil
}

// RPCServer serves a Nop over net/rpc; go-plugin registers it under the
// name "Plugin".
type RPCServer struct {
	// Impl is the implementation the calls go to.
	Impl Nop
}

// Nop calls s.Impl.Nop. Its signature is the one net/rpc requires: the
// argument and the reply are unused.
func (s *RPCServer) Nop(_ any, _ *any) error {
	return s.Impl.Nop()
}

// RPCClient is the host's Nop: each call is one net/rpc round trip to the
// plugin's RPCServer.
type RPCClient struct {
	client *rpc.Client
}

// Nop calls the plugin's Nop and returns its error or the transport's.
func (c *RPCClient) Nop() error {
	var reply any
	return c.client.Call("Plugin.Nop", new(any), &reply)
}
