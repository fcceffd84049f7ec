// Command dynop inspects the plugins a dynop host finds, runs pipelines
// of their operators, writes and checks plugin manifests and signatures,
// and scaffolds new plugins. `dynop help` lists the commands; package
// [github.com/dynop/dynop/cli] documents them and their JSON output.
//
// This build compiles in the example Go plugins under plugins/.
package main

import (
	"os"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/cli"
	_ "github.com/dynop/dynop/plugins/greeter" // example plugins, compiled in
	_ "github.com/dynop/dynop/plugins/stats"   // bindings of the native examples' interfaces
	_ "github.com/dynop/dynop/plugins/text"
	_ "github.com/dynop/dynop/plugins/vecmath/govecmath"
)

func main() {
	// Started as a scanner child process by a host reading a plugin file
	// that has no manifest, the program inspects the file and exits here.
	// (cli.Main would too; a program that opens hosts does it first.)
	dynop.ServeScanner()
	os.Exit(cli.Main())
}
