package pipeline

import (
	"os"
	"testing"

	"github.com/dynop/dynop"
)

// TestMain serves as the scanner child process when a host of the tests
// (one over a native plugin file without a manifest) starts this binary
// as one.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	os.Exit(m.Run())
}
