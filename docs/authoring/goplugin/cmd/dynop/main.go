// Command dynop is the dynop command with the Go plugin acme.plugin.shout
// compiled in. Go plugins are linked into the program that uses them, so
// a project of Go plugins builds its own dynop:
//
//	go build -o bin/dynop ./docs/authoring/goplugin/cmd/dynop
//	bin/dynop inspect acme.plugin.shout
//
// It finds plugin files (C, C++, Rust, WebAssembly) like any dynop.
package main

import (
	"os"

	"github.com/dynop/dynop/cli"
	_ "github.com/dynop/dynop/docs/authoring/goplugin" // registers acme.plugin.shout from init
)

// main calls cli.Main before anything else: started as a scanner child
// process by a host reading a plugin file without a manifest, cli.Main
// inspects the file and exits (dynop.ServeScanner).
func main() { os.Exit(cli.Main()) }
