package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: --in PATH and --in photos=PATH2 together dropped PATH2
// silently.
func TestRegressionInMixedForms(t *testing.T) {
	withImgproc(t)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", demo, "--out", out,
		"--in", "../examples/pipelines/images/rings.png",
		"--in", "photos=../examples/pipelines/images/")
	t.Logf("exit %d\n%s%s", code, stdout, stderr)
	// rings.png, then the directory's six images less rings.png again.
	if code != 0 || !strings.HasPrefix(stdout, "demo: 6 images in ") {
		t.Errorf("--in PATH --in photos=DIR: both should be read")
	}
}

// Regression: a path that contains '=' was taken for NAME=PATH.
func TestRegressionInPathWithEquals(t *testing.T) {
	withImgproc(t)
	dir := t.TempDir()
	data, err := os.ReadFile("../examples/pipelines/images/rings.png")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k=v.png")
	os.WriteFile(p, data, 0o644)
	code, stdout, stderr := runCLI(t, "run", demo, "--out", t.TempDir(), "--in", p)
	t.Logf("exit %d\n%s%s", code, stdout, stderr)
	if code != 0 {
		t.Errorf("--in with a path containing '=' failed")
	}
}
