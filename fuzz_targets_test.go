package dynop_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeFuzzListsEveryTarget: `make fuzz` (and CI) runs the fuzz targets
// the Makefile lists, one go test per target; a target missing from the
// list would never be fuzzed.
func TestMakeFuzzListsEveryTarget(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	if m := regexp.MustCompile(`(?s)FUZZ_TARGETS = \\\n(.*?)\nfuzz:`).FindSubmatch(mk); m != nil {
		for _, f := range strings.Fields(strings.ReplaceAll(string(m[1]), `\`, " ")) {
			listed[f] = true
		}
	} else {
		t.Fatal("the Makefile has no FUZZ_TARGETS list before its fuzz target")
	}
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	found := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bench" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			found++
			if target := filepath.ToSlash(filepath.Dir(path)) + ":" + string(m[1]); !listed[target] {
				t.Errorf("%s declares %s, which the Makefile's FUZZ_TARGETS does not list (as %s)", path, m[1], target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != len(listed) {
		t.Errorf("the Makefile lists %d fuzz targets, the sources declare %d", len(listed), found)
	}
}
