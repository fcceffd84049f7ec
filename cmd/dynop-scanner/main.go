// Command dynop-scanner is the scanner child of the hosts that libdynop
// opens (dynop_host.h): it inspects one plugin file, as a host asks it to
// (see dynop.ServeScanner), and exits. A C program cannot serve as its
// own scanner, as a Go host does, so libdynop runs this program, from the
// directory of libdynop.so unless dynop_host_options.scanner names
// another. Run by hand, it says what it is for and fails.
package main

import (
	"fmt"
	"os"

	"github.com/dynop/dynop"
	_ "github.com/dynop/dynop/loader/native" // shared libraries with the C ABI
	_ "github.com/dynop/dynop/loader/wasm"   // WebAssembly modules
)

func main() {
	dynop.ServeScanner()
	fmt.Fprintln(os.Stderr, "dynop-scanner: the scanner child of libdynop's hosts; a host starts it with DYNOP_SCANNER=1 to inspect a plugin file, and it is not run by hand")
	os.Exit(2)
}
