package native_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestHeadersCompileCleanly compiles dynop.h and the example interface
// headers as every C and C++ standard a plugin might use, with -Wall
// -Wextra -pedantic -Werror, with each compiler the machine has. The
// headers' static asserts check the struct layouts as they compile.
func TestHeadersCompileCleanly(t *testing.T) {
	src := "#include <dynop/dynop.h>\n#include \"vecmath/vecmath.h\"\n#include \"stats/stats.h\"\n" +
		"int dynop_header_test(void);\nint dynop_header_test(void) { return (int)sizeof(dynop_plugin_info); }\n"
	dir := t.TempDir()
	for _, lang := range []struct {
		ext, env, def string
		stds          []string
	}{
		{".c", "CC", "cc", []string{"c99", "c11", "c17"}},
		{".cpp", "CXX", "c++", []string{"c++11", "c++17", "c++20"}},
	} {
		file := filepath.Join(dir, "header"+lang.ext)
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		compilers := []string{cbuild.Compiler(t, lang.ext == ".cpp")}
		if other := map[string]string{".c": "clang", ".cpp": "clang++"}[lang.ext]; other != compilers[0] {
			if _, err := exec.LookPath(other); err == nil {
				compilers = append(compilers, other)
			}
		}
		for _, cc := range compilers {
			for _, std := range lang.stds {
				cmd := exec.Command(cc, "-std="+std, "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
					"-I", cbuild.Path("abi/include"), "-I", cbuild.Path("plugins"), file)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s -std=%s: %v\n%s", cc, std, err, out)
				}
			}
		}
	}
}
