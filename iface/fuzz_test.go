package iface

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseUID checks parseUID on any text: no panic; an error wraps
// ErrSyntax and quotes the input; a UID that parses prints in the
// canonical form, which parses back to the same UID and matches the
// input but for case and braces; UnmarshalText agrees with parseUID.
func FuzzParseUID(f *testing.F) {
	for _, s := range []string{
		"AD9DC29C-0A89-4A4E-B900-A7183B48336E",
		"5b1e0c3a-2f64-4b7e-9d1a-8c3f2e6a4b10",
		"{00000000-0000-0000-0000-000000000000}",
		"{AD9DC29C-0A89-4A4E-B900-A7183B48336E",
		"AD9DC29C0A894A4EB900A7183B48336E",
		"AD9DC29C-0A89-4A4E-B900-A7183B48336G",
		"+D9DC29C-0A89-4A4E-B900-A7183B48336E",
		"",
		"{}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parseUID(s)
		var v UID
		uerr := v.UnmarshalText([]byte(s))
		if (err == nil) != (uerr == nil) || v != u {
			t.Fatalf("parseUID(%q) = %v, %v but UnmarshalText gives %v, %v", s, u, err, v, uerr)
		}
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("parseUID(%q): error %q does not wrap ErrSyntax", s, err)
			}
			if !strings.Contains(err.Error(), "UID ") {
				t.Errorf("parseUID(%q): error %q does not say it is about a UID", s, err)
			}
			if u != (UID{}) {
				t.Errorf("parseUID(%q) failed but returned %v", s, u)
			}
			return
		}
		text := u.String()
		if want := strings.ToUpper(strings.Trim(s, "{}")); text != want {
			t.Errorf("parseUID(%q).String() = %q, want %q", s, text, want)
		}
		back, err := parseUID(text)
		if err != nil || back != u {
			t.Errorf("parseUID(%q) = %v, %v; want %v (round trip of %q)", text, back, err, u, s)
		}
		if m, _ := u.MarshalText(); string(m) != text {
			t.Errorf("MarshalText = %q, String = %q", m, text)
		}
	})
}

// FuzzParseVersion checks parseVersion on any text: no panic; an error
// wraps ErrSyntax and quotes the input; a version that parses prints as
// the input without its "v", parses back to itself, and UnmarshalText
// agrees with parseVersion.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{
		"1.1.0", "v0.3.12", "0.0.0", "4294967295.0.1", "4294967296.0.0",
		"01.2.3", "1.2", "1.2.3.4", "+1.2.3", "-1.2.3", "1..3", "v", "", "1.2.3-rc1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseVersion(s)
		var w Version
		uerr := w.UnmarshalText([]byte(s))
		if (err == nil) != (uerr == nil) || w != v {
			t.Fatalf("parseVersion(%q) = %v, %v but UnmarshalText gives %v, %v", s, v, err, w, uerr)
		}
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("parseVersion(%q): error %q does not wrap ErrSyntax", s, err)
			}
			if !strings.Contains(err.Error(), "version ") {
				t.Errorf("parseVersion(%q): error %q does not say it is about a version", s, err)
			}
			if !v.IsZero() {
				t.Errorf("parseVersion(%q) failed but returned %v", s, v)
			}
			return
		}
		if text := v.String(); text != strings.TrimPrefix(s, "v") {
			t.Errorf("parseVersion(%q).String() = %q, want the input without its v", s, text)
		}
		back, err := parseVersion(v.String())
		if err != nil || back != v {
			t.Errorf("round trip of %q: parseVersion(%q) = %v, %v", s, v.String(), back, err)
		}
		if v.Compare(back) != 0 || !Compatible(v, back) {
			t.Errorf("%v is not equal to and compatible with itself", v)
		}
	})
}
