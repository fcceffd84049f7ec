// Command stdplugin is the peer that Go's standard plugin package loads in
// the call-overhead benchmark: built with go build -buildmode=plugin, it
// exports an empty function, Nop, and Answer, which lets a test tell the
// plugin's symbols from anything else.
//
// It imports nothing, so that the host and the plugin share no package but
// the runtime's, and builds only with the toolchain and flags of the binary
// that loads it.
package main

// Nop does nothing: calling it measures the cost of a call through a
// symbol looked up in a plugin.
func Nop() {}

// Answer returns 42, a value the host checks to know it called into this
// plugin.
func Answer() int { return 42 }

// main is never run: a plugin's main function is ignored. It is here so
// that go build and go vet of the whole module accept the package.
func main() {}
