package cbuild

import (
	"strings"
	"testing"
)

// TestBLASSkipsWithoutLibraries: where OpenBLAS's headers are missing
// (simulated with a header no machine has), BLASFlags says which and what
// to install, and BLAS skips the test instead of failing it.
func TestBLASSkipsWithoutLibraries(t *testing.T) {
	cc := Compiler(t, false)
	saved := BLASHeaders
	BLASHeaders = append(append([]string{}, saved...), "dynop_no_such_header.h")
	defer func() { BLASHeaders = saved }()
	_, _, err := BLASFlags(cc)
	if err == nil || !strings.Contains(err.Error(), "OpenBLAS's headers (cblas.h, dynop_no_such_header.h) are missing") ||
		!strings.Contains(err.Error(), "apt-get install libopenblas-dev") {
		t.Fatalf("BLASFlags without the headers: %v", err)
	}
	if _, err := BuildBLAS(cc, t.TempDir()); err == nil || !strings.Contains(err.Error(), "libopenblas-dev") {
		t.Errorf("BuildBLAS without the headers: %v", err)
	}
	var skipped bool
	t.Run("build", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		BLAS(t)
		t.Error("BLAS built the plugin without its headers")
	})
	if !skipped {
		t.Error("BLAS did not skip the test without the headers")
	}
}

// TestBLASFlags: with OpenBLAS installed, the flags link it, and the
// plugin builds with them.
func TestBLASFlags(t *testing.T) {
	_, libs, err := BLASFlags(Compiler(t, false))
	if err != nil {
		t.Skip(err)
	}
	if joined := strings.Join(libs, " "); !strings.Contains(joined, "-lopenblas") {
		t.Errorf("libs %q lack -lopenblas", joined)
	}
	if lib := BLAS(t); !strings.HasSuffix(lib, "libdynop_blas.so") {
		t.Errorf("BLAS built %s", lib)
	}
}
