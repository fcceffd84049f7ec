package blas_test

import (
	"flag"
	"os"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/loader/native"
)

// TestMain runs the plugin's tests in the native loader's bounds-checking
// mode: a kernel that writes outside its output fails its test, naming the
// operator, instead of corrupting the test's memory. Benchmarks run
// without it, as users run the plugin. It serves as the scanner child
// process first, when a host of the tests starts this binary as one.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Setenv(native.CheckBoundsEnv, "1")
	}
	os.Exit(m.Run())
}
