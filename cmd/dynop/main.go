// Command dynop inspects the plugins a dynop host finds, runs pipelines
// of their operators, writes and checks plugin manifests and signatures,
// and scaffolds new plugins. `dynop help` lists the commands; package
// [github.com/dynop/dynop/cli] documents them and their JSON output.
//
// It compiles in dynop's own Go plugins (image, npy) and no example: what
// `dynop list` shows beyond those is what the user installed or pointed
// it at. A program with Go plugins of its own builds its own dynop from
// [cli.Main] (see cli's package documentation).
package main

import (
	"os"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/cli"
)

func main() {
	// Started as a scanner child process by a host reading a plugin file
	// that has no manifest, the program inspects the file and exits here.
	// (cli.Main would too; a program that opens hosts does it first.)
	dynop.ServeScanner()
	os.Exit(cli.Main())
}
