package dynop_test

import (
	"strings"
	"testing"

	"github.com/dynop/dynop"
)

// FuzzParseSandboxPolicy: a policy parses from its own name, ignoring case
// and surrounding space; anything else is refused with an error that
// quotes it and lists the policies.
func FuzzParseSandboxPolicy(f *testing.F) {
	for _, s := range []string{"prefer-native", "unsigned", "always", " ON ", "False", "", "sandbox", "alwayss"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := dynop.ParseSandboxPolicy(s)
		if err != nil {
			for _, want := range []string{"sandbox policy", "want prefer-native, unsigned or always"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("ParseSandboxPolicy(%q) = %v: does not say %q", s, err, want)
				}
			}
			return
		}
		again, err := dynop.ParseSandboxPolicy(p.String())
		if err != nil || again != p {
			t.Errorf("ParseSandboxPolicy(%q) = %v, whose name %q parses as %v, %v", s, p, p.String(), again, err)
		}
		if strings.HasPrefix(p.String(), "SandboxPolicy(") {
			t.Errorf("ParseSandboxPolicy(%q) = %v, a policy without a name", s, p)
		}
	})
}
