package pipeline

import (
	"os"
	"testing"

	"github.com/dynop/dynop"
)

// TestMain serves as the scanner child process when a host of the tests
// (one over a native plugin file without a manifest) starts this binary
// as one, and as the run TestKilledRunResumes kills.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	if os.Getenv(childEnv) != "" {
		runChild()
	}
	os.Exit(m.Run())
}
