package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorNotFoundHint: a pipeline operator that no plugin found
// provides is reported with where the host looked, and how to give the
// CLI a plugin; one with a near name gets a suggestion, not the search
// path.
func TestOperatorNotFoundHint(t *testing.T) {
	dir := t.TempDir()
	extra := t.TempDir()
	pipe := func(name, op string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("inputs: {a: {files: x.png}}\noperators:\n  - {name: d, op: "+op+", inputs: [a]}\noutputs: {o: {from: d}}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	code, _, stderr := runCLI(t, "run", "--plugin", extra, pipe("acme.yaml", "acme.Blur"))
	for _, want := range []string{
		`operator not found: "acme.Blur"; the host looked for plugins in ` + extra + ` (given), `,
		"(the user's plugin directory); DYNOP_PLUGIN_PATH adds files and directories",
		"\nhint: --plugin PATH adds a plugin file or directory, and dynop doctor checks the search path\n",
	} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, %q; want exit 1 with %q", code, stderr, want)
		}
	}
	code, _, stderr = runCLI(t, "run", pipe("resize.yaml", "Resize"))
	if want := `operator not found: "Resize"; did you mean "image.Resize"?`; code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "looked for") || strings.Contains(stderr, "--plugin") {
		t.Errorf("exit %d, %q; want exit 1 with only %q", code, stderr, want)
	}
}
