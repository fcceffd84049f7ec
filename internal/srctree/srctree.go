// Package srctree finds dynop's source tree: the one a binary was
// compiled from, or a checkout named by a user. The CLI looks there for
// what an installation would hold beside it (dynop.h, the Rust crate)
// when the program runs from a checkout instead.
package srctree

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Module is dynop's module path.
const Module = "github.com/dynop/dynop"

// Built returns the root of the source tree this binary was compiled
// from, or "" if the build does not say (-trimpath). The tree may have
// moved or gone since: check it with [IsRoot].
func Built() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file))) // above internal/srctree/
}

// IsRoot reports whether dir holds a go.mod that declares [Module].
func IsRoot(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok && rest != strings.TrimLeft(rest, " \t") {
			return strings.Trim(strings.TrimSpace(rest), `"`) == Module
		}
	}
	return false
}
