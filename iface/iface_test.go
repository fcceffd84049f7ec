package iface

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const nvigiText = "AD9DC29C-0A89-4A4E-B900-A7183B48336E"

func TestParseUIDForms(t *testing.T) {
	want := UID{0xad, 0x9d, 0xc2, 0x9c, 0x0a, 0x89, 0x4a, 0x4e, 0xb9, 0x00, 0xa7, 0x18, 0x3b, 0x48, 0x33, 0x6e}
	for _, s := range []string{nvigiText, "{" + nvigiText + "}", strings.ToLower(nvigiText), "{ad9dc29c-0a89-4a4e-B900-a7183b48336e}"} {
		u, err := parseUID(s)
		if err != nil {
			t.Fatalf("parseUID(%q): %v", s, err)
		}
		if u != want {
			t.Errorf("parseUID(%q) = %s, want %s", s, u, want)
		}
		if u.String() != nvigiText {
			t.Errorf("String() = %q, want %q", u.String(), nvigiText)
		}
	}
}

func TestParseUIDErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "want 36 characters"},
		{"AD9DC29C0A894A4EB900A7183B48336E", "want 36 characters"},
		{"{" + nvigiText, "unbalanced braces"},
		{nvigiText + "}", "unbalanced braces"},
		{"AD9DC29C_0A89-4A4E-B900-A7183B48336E", "want '-' at position 9"},
		{"AD9DC29C-0A89-4A4E-B900-A7183B48336G", `"6G" at position 35 is not hexadecimal`},
		{"AD9DC29C-0A89-4A4E-B900-A7183B48336E0", "got 37"},
	} {
		_, err := parseUID(tc.in)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("parseUID(%q) error = %v, want ErrSyntax", tc.in, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
			t.Errorf("parseUID(%q) error = %q, want it to quote the input and say %q", tc.in, err, tc.want)
		}
	}
}

func TestMustParseUIDPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not-a-uid") {
			t.Errorf("MustParseUID did not panic with the input in the message: %v", r)
		}
	}()
	MustParseUID("not-a-uid")
}

func TestUIDJSON(t *testing.T) {
	u := MustParseUID(nvigiText)
	b, err := json.Marshal(struct{ U UID }{u})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"U":"`+nvigiText+`"}` {
		t.Errorf("json = %s", b)
	}
	var back struct{ U UID }
	if err := json.Unmarshal(b, &back); err != nil || back.U != u {
		t.Errorf("round trip = %v, %v", back.U, err)
	}
	if err := json.Unmarshal([]byte(`{"U":"xyz"}`), &back); !errors.Is(err, ErrSyntax) {
		t.Errorf("bad UID in JSON: err = %v, want ErrSyntax", err)
	}
	if !(UID{}).IsZero() || u.IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
	}{{"1.2.3", V(1, 2, 3)}, {"v0.10.0", V(0, 10, 0)}, {"4294967295.0.0", V(4294967295, 0, 0)}} {
		v, err := parseVersion(tc.in)
		if err != nil || v != tc.want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", tc.in, v, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"1.2", "want major.minor.patch, got 2 part(s)"},
		{"1.2.3.4", "got 4 part(s)"},
		{"1..3", `minor part ""`},
		{"01.2.3", `major part "01"`},
		{"1.-2.3", `minor part "-2"`},
		{"1.2.x", `patch part "x"`},
		{"4294967296.0.0", "below 2^32"},
	} {
		_, err := parseVersion(tc.in)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseVersion(%q) error = %v, want ErrSyntax saying %q", tc.in, err, tc.want)
		}
	}
}

func TestVersionStringCompareJSON(t *testing.T) {
	if s := V(1, 22, 333).String(); s != "1.22.333" {
		t.Errorf("String = %q", s)
	}
	ordered := []Version{V(0, 0, 1), V(0, 1, 0), V(1, 0, 0), V(1, 0, 9), V(1, 2, 0), V(2, 0, 0)}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := ordered[i].Compare(ordered[j]); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	var v Version
	if err := json.Unmarshal([]byte(`"2.3.4"`), &v); err != nil || v != V(2, 3, 4) {
		t.Errorf("unmarshal = %v, %v", v, err)
	}
	if b, _ := json.Marshal(V(2, 3, 4)); string(b) != `"2.3.4"` {
		t.Errorf("marshal = %s", b)
	}
}

func TestCompatible(t *testing.T) {
	for _, tc := range []struct {
		provided, requested Version
		ok                  bool
		why                 string
	}{
		{V(1, 2, 0), V(1, 2, 0), true, ""},
		{V(1, 3, 0), V(1, 2, 0), true, ""},
		{V(1, 2, 0), V(1, 0, 7), true, ""},
		{V(1, 2, 3), V(1, 2, 5), true, ""}, // the patch never decides
		{V(1, 2, 0), V(1, 3, 0), false, "provided minor 2 is older than requested minor 3"},
		{V(2, 0, 0), V(1, 0, 0), false, "major versions differ (2 vs 1)"},
		{V(1, 9, 0), V(2, 0, 0), false, "major versions differ (1 vs 2)"},
		{V(0, 3, 0), V(0, 3, 0), true, ""},
		{V(0, 4, 0), V(0, 3, 0), false, "with major version 0 the minor versions must match (4 vs 3)"},
		{V(0, 2, 0), V(0, 3, 0), false, "minor versions must match (2 vs 3)"},
	} {
		if got := Compatible(tc.provided, tc.requested); got != tc.ok {
			t.Errorf("Compatible(%v, %v) = %t, want %t", tc.provided, tc.requested, got, tc.ok)
		}
		err := CheckVersion(`interface "x"`, tc.provided, tc.requested)
		if tc.ok {
			if err != nil {
				t.Errorf("CheckVersion(%v, %v) = %v", tc.provided, tc.requested, err)
			}
			continue
		}
		if !errors.Is(err, ErrVersion) {
			t.Fatalf("CheckVersion(%v, %v) = %v, want ErrVersion", tc.provided, tc.requested, err)
		}
		for _, want := range []string{`interface "x"`, "requested " + tc.requested.String(), "provided " + tc.provided.String(), tc.why} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("CheckVersion(%v, %v) = %q, missing %q", tc.provided, tc.requested, err, want)
			}
		}
	}
}

type shape interface{ Area() float64 }
type square struct{ side float64 }

func (s square) Area() float64 { return s.side * s.side }

type adder struct {
	desc Desc
	impl any
}

func (a *adder) AddInterface(d Desc, impl any) error { a.desc, a.impl = d, impl; return nil }

func TestDef(t *testing.T) {
	def := Define[shape](nvigiText, "test.Shape", V(1, 0, 0))
	if def.UID.String() != nvigiText || def.Name != "test.Shape" || def.Version != V(1, 0, 0) {
		t.Fatalf("Define = %+v", def)
	}
	s, err := def.Cast(square{2})
	if err != nil || s.Area() != 4 {
		t.Fatalf("Cast = %v, %v", s, err)
	}
	_, err = def.Cast(42)
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "iface.shape") || !strings.Contains(err.Error(), "got int") {
		t.Errorf("Cast(42) error = %v, want ErrType naming iface.shape and int", err)
	}
	var a adder
	if err := def.Provide(&a, square{3}); err != nil || a.desc != def.Desc || a.impl != (square{3}) {
		t.Errorf("Provide added %v %v, %v", a.desc, a.impl, err)
	}
	if got := def.String(); got != "test.Shape v1.0.0 {"+nvigiText+"}" {
		t.Errorf("String = %q", got)
	}
}

func TestDefineRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ uid, name, want string }{
		{"zz", "n", "want 36 characters"},
		{"00000000-0000-0000-0000-000000000000", "n", "UID is zero"},
		{nvigiText, "", "name is empty"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("Define(%q, %q) panic = %v, want %q", tc.uid, tc.name, r, tc.want)
				}
			}()
			Define[shape](tc.uid, tc.name, V(1, 0, 0))
		}()
	}
}
