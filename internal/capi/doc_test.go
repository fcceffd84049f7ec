package capi_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestDocQuotes checks docs/c-api.md's code: every C and C++ block after
// an <!-- example: PATH --> line is in PATH verbatim, as whole lines (the
// files TestLifecycleExample, TestLifecycleCXXExample and
// TestTrainingLoopExample build and run); the block after
// <!-- declarations: ... --> names exactly the functions dynop_host.h
// declares; and no other C or C++ block is left unchecked.
func TestDocQuotes(t *testing.T) {
	doc, err := os.ReadFile(cbuild.Path("docs/c-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(cbuild.Path("abi/include/dynop/dynop_host.h"))
	if err != nil {
		t.Fatal(err)
	}
	fn := regexp.MustCompile(`\b(dynop_[a-z_]+)\(`)
	names := func(text string) []string {
		var out []string
		for _, m := range fn.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	decl := regexp.MustCompile(`^(?:dynop_result|dynop_version|const char|void)\s*\*?\s*(dynop_[a-z_]+)\(`)
	var declared []string
	for _, line := range strings.Split(string(header), "\n") {
		if m := decl.FindStringSubmatch(line); m != nil {
			declared = append(declared, m[1])
		}
	}
	slices.Sort(declared)
	lines := strings.Split(string(doc), "\n")
	quoted := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```c" && lines[i] != "```cpp" {
			continue
		}
		end := slices.Index(lines[i+1:], "```")
		if end < 0 {
			t.Fatalf("docs/c-api.md:%d: the block is not closed", i+1)
		}
		block := strings.Join(lines[i+1:i+1+end], "\n") + "\n"
		mark := ""
		if i > 0 {
			mark = lines[i-1]
		}
		switch {
		case strings.HasPrefix(mark, "<!-- example: "):
			path := strings.TrimSuffix(strings.TrimPrefix(mark, "<!-- example: "), " -->")
			src, err := os.ReadFile(cbuild.Path(path))
			if err != nil {
				t.Errorf("docs/c-api.md:%d: %v", i, err)
			} else if !strings.Contains("\n"+string(src), "\n"+block) {
				t.Errorf("docs/c-api.md:%d: the block is not in %s verbatim (as whole lines):\n%s", i+2, path, block)
			}
			quoted[path] = true
		case strings.HasPrefix(mark, "<!-- declarations: "):
			if got := names(block); !slices.Equal(got, declared) {
				t.Errorf("docs/c-api.md:%d: the block declares %v; dynop_host.h declares %v", i+2, got, declared)
			}
		default:
			t.Errorf("docs/c-api.md:%d: a code block with neither <!-- example: PATH --> nor <!-- declarations: --> before it", i+1)
		}
		i += end + 1
	}
	for _, p := range []string{"examples/c/lifecycle.c", "examples/c/lifecycle.cpp", "examples/c/training_loop.c"} {
		if !quoted[p] {
			t.Errorf("docs/c-api.md quotes nothing of %s", p)
		}
	}
	if len(declared) < 18 {
		t.Errorf("found %d declarations in dynop_host.h: %v", len(declared), declared)
	}
}
