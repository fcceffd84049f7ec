package cli

import (
	"regexp"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestInspectFileShowsAnotherFile: `dynop inspect FILE` of a file
// that is unusable (here: built for plugin API 9) shows, instead, another
// file on the search path with the same plugin ID, because it looks the
// file up by ID and the host's record for the ID is the usable duplicate.
func TestInspectFileShowsAnotherFile(t *testing.T) {
	flags := []string{"-Wno-unused-function", "-Wno-unused-const-variable"}
	target := cbuild.Plugin(t, "libtarget.so", "loader/native/testdata/fixture.c", append(flags, "-DAPI_MAJOR=9")...)
	other := cbuild.Plugin(t, "libother.so", "loader/native/testdata/fixture.c", flags...)
	code, out, errOut := runCLI(t, "inspect", target, other)
	t.Logf("exit %d\n%s%s", code, out, errOut)
	if !regexp.MustCompile(`(?m)^path +` + regexp.QuoteMeta(target) + `$`).MatchString(out) {
		t.Errorf("inspect %s shows another file:\n%s", target, out)
	}
}

// TestListHidesBrokenDuplicate: a broken plugin file (invalid info)
// followed on the search path by a good file with its ID is listed as a
// "duplicate" of the later file, so `dynop list` exits 0 and never says
// the first file is broken, nor why.
func TestListHidesBrokenDuplicate(t *testing.T) {
	flags := []string{"-Wno-unused-function", "-Wno-unused-const-variable"}
	bad := cbuild.Plugin(t, "libbad.so", "loader/native/testdata/fixture.c", append(flags, `-DFIXTURE_IFACE_NAME=""`)...)
	good := cbuild.Plugin(t, "libgood.so", "loader/native/testdata/fixture.c", flags...)
	code, out, errOut := runCLI(t, "list", bad, good)
	t.Logf("exit %d\n%s%s", code, out, errOut)
	if code == 0 {
		t.Errorf("dynop list exits 0 though %s is broken", bad)
	}
}
