package dynop_test

import (
	"strings"
	"testing"

	"github.com/dynop/dynop"
)

// TestDuplicateMessage: when the first file with an ID is unusable and a
// later one wins, the first keeps its state and its reason (its unmet
// requirement), and names the file used instead; it does not claim the
// later file comes first.
func TestDuplicateMessage(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	foreign := writeFile(t, first, "a.so", testMagic+"id=test.plugin.dup\nos=plan9\n")
	native := writeFile(t, second, "a.so", testMagic+"id=test.plugin.dup\n")
	h := openFiles(t, []string{first, second})
	d := byPath(t, h, foreign)
	if d.State != dynop.StateUnsupported || d.DuplicateOf != native {
		t.Fatalf("the unusable first file: %v, duplicate of %q; want unsupported, of %s", d.State, d.DuplicateOf, native)
	}
	msg := d.Err.Error()
	if strings.Contains(msg, native+" has it and comes first") {
		t.Errorf("the reason says the later file comes first: %q", msg)
	}
	if !strings.Contains(msg, native+", which has its plugin id") {
		t.Errorf("the reason does not name the file used instead: %q", msg)
	}
	if !strings.Contains(msg, "plan9") {
		t.Errorf("the reason does not say why the first file was passed over (it requires plan9): %q", msg)
	}
}
