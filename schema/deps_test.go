package schema_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// deps returns the packages that pkg (such as "./schema") depends on, for
// the given GOOS and GOARCH ("" for the host's).
func deps(t *testing.T, pkg, goos, goarch string) []string {
	t.Helper()
	cmd := exec.Command(cbuild.GoCommand(t), "list", "-deps", pkg)
	cmd.Dir = cbuild.Root()
	cmd.Env = os.Environ()
	if goos != "" {
		cmd.Env = append(cmd.Env, "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	}
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if exit, ok := err.(*exec.ExitError); ok {
			msg = string(exit.Stderr)
		}
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	return strings.Fields(string(out))
}

// TestLeaf: schema stays at the bottom, so that a WebAssembly guest that
// declares a plugin links no runtime; and plugin, which holds its data as
// aliases, does not bring graph (or regexp) back.
func TestLeaf(t *testing.T) {
	const mod = "github.com/dynop/dynop/"
	allowed := []string{mod + "schema", mod + "iface", mod + "tensor", mod + "internal/suggest", mod + "internal/errdefs"}
	for _, target := range [][2]string{{"", ""}, {"wasip1", "wasm"}} {
		for _, d := range deps(t, "./schema", target[0], target[1]) {
			if d == "regexp" || strings.HasPrefix(d, mod) && !slices.Contains(allowed, d) {
				t.Errorf("schema (GOOS=%s) depends on %s", target[0], d)
			}
		}
	}
	for _, d := range deps(t, "./plugin", "", "") {
		if d == "regexp" || d == mod+"graph" {
			t.Errorf("plugin depends on %s", d)
		}
	}
}
