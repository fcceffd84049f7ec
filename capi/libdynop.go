// Command libdynop is libdynop's C API as a library: built with
// -buildmode=c-shared it is bin/libdynop.so, with -buildmode=c-archive
// bin/libdynop.a (`make libdynop`). The functions of
// abi/include/dynop/dynop_host.h are exported by package internal/capi;
// this package only links them in. Its main never runs.
package main

import _ "github.com/dynop/dynop/internal/capi" // the exported functions

func main() {}
