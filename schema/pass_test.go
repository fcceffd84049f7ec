package schema_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/dynop/dynop/schema"
)

// passName is the rule that Pass.Validate applies to names by hand, as
// graph applied it with this regexp before the descriptor moved here.
var passName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.+-]*$`)

// checkPassName checks that Pass.Validate accepts name exactly when the
// regexp matches it.
func checkPassName(t *testing.T, name string) {
	t.Helper()
	err := schema.Pass{Name: name, Kind: schema.Global}.Validate()
	if want := passName.MatchString(name); (err == nil) != want {
		t.Errorf("Validate of pass name %q = %v; the regexp matches: %t", name, err, want)
	}
	if err != nil && !errors.Is(err, schema.ErrPass) {
		t.Errorf("Validate of pass name %q = %v, want ErrPass", name, err)
	}
}

func TestPassName(t *testing.T) {
	for _, name := range []string{
		"", "a", "Z", "imgproc.simd-grayscale", "a+b", "x_1.y-2", "dynop.fuse-pointwise",
		"1a", "_a", ".a", "-a", "+a", "a b", "a/b", "é", "aé", "a\n", "a\x00", "a*", "a,b",
	} {
		checkPassName(t, name)
	}
}

func FuzzPassName(f *testing.F) {
	for _, s := range []string{"", "a", "imgproc.simd-grayscale", "1a", "aé"} {
		f.Add(s)
	}
	f.Fuzz(checkPassName)
}

func TestPassValidate(t *testing.T) {
	for _, tc := range []struct {
		d    schema.Pass
		want string // "" for nil
	}{
		{schema.Pass{Name: "p", Kind: schema.Populate, Match: "image.Decode"}, ""},
		{schema.Pass{Name: "p", Kind: schema.Partition, Priority: 3}, ""},
		{schema.Pass{Name: "p", Kind: schema.Populate}, `graph: pass "p": graph pass failed: a populate pass needs Match: the node name or kind it populates`},
		{schema.Pass{Name: "p", Kind: schema.Global, Match: "x"}, `graph: pass "p": graph pass failed: Match is for populate passes, not global passes`},
		{schema.Pass{Name: "p", Kind: "early"}, `graph: pass "p": graph pass failed: kind "early" is not one of populate, partition, global`},
	} {
		got := ""
		if err := tc.d.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v.Validate() = %q, want %q", tc.d, got, tc.want)
		}
	}
}
