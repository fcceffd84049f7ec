package iface

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a semantic version, major.minor.patch.
//
// For an interface, the major number changes when the interface changes in
// a way old callers cannot survive, the minor number when members are
// appended, and the patch number for anything that leaves the layout as it
// was. See [Compatible] for the rule a provider and a caller must meet.
type Version struct {
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
	Patch uint32 `json:"patch"`
}

// V returns the Version major.minor.patch.
func V(major, minor, patch uint32) Version { return Version{major, minor, patch} }

// parseVersion parses "major.minor.patch", with an optional leading "v".
// Each part is a decimal number without sign or leading zeros. Errors wrap
// [ErrSyntax].
func parseVersion(s string) (Version, error) {
	text := strings.TrimPrefix(s, "v")
	parts := strings.Split(text, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("%w: version %q: want major.minor.patch, got %d part(s)", ErrSyntax, s, len(parts))
	}
	var n [3]uint32
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') || p[0] == '+' || p[0] == '-' {
			return Version{}, fmt.Errorf("%w: version %q: %s part %q is not a decimal number without leading zeros", ErrSyntax, s, partName[i], p)
		}
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return Version{}, fmt.Errorf("%w: version %q: %s part %q is not a number below 2^32", ErrSyntax, s, partName[i], p)
		}
		n[i] = uint32(v)
	}
	return Version{n[0], n[1], n[2]}, nil
}

var partName = [3]string{"major", "minor", "patch"}

// MustParseVersion returns the version s writes as "major.minor.patch",
// with an optional leading "v"; each part is a decimal number without
// sign or leading zeros. It panics if s is malformed; [Version.UnmarshalText]
// reads versions that come from elsewhere.
func MustParseVersion(s string) Version {
	v, err := parseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String returns "major.minor.patch".
func (v Version) String() string {
	return string(v.appendText(make([]byte, 0, 16)))
}

func (v Version) appendText(dst []byte) []byte {
	dst = strconv.AppendUint(dst, uint64(v.Major), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64(v.Minor), 10)
	dst = append(dst, '.')
	return strconv.AppendUint(dst, uint64(v.Patch), 10)
}

// IsZero reports whether v is 0.0.0.
func (v Version) IsZero() bool { return v == Version{} }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	switch {
	case v.Major != w.Major:
		return cmp3(v.Major, w.Major)
	case v.Minor != w.Minor:
		return cmp3(v.Minor, w.Minor)
	default:
		return cmp3(v.Patch, w.Patch)
	}
}

func cmp3(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MarshalText implements [encoding.TextMarshaler] with the form of [Version.String].
func (v Version) MarshalText() ([]byte, error) { return v.appendText(nil), nil }

// UnmarshalText implements [encoding.TextUnmarshaler]: it reads the form
// [MustParseVersion] takes. Errors wrap [ErrSyntax].
func (v *Version) UnmarshalText(text []byte) error {
	p, err := parseVersion(string(text))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Compatible reports whether something that provides version provided can
// serve a caller that asks for at least version requested:
//
//   - the major numbers are equal, and
//   - the provided minor is at least the requested one, or, while the major
//     number is 0 (nothing is stable yet), the minors are equal.
//
// The patch number never decides: a patch release changes no layout.
func Compatible(provided, requested Version) bool {
	if provided.Major != requested.Major {
		return false
	}
	if provided.Major == 0 {
		return provided.Minor == requested.Minor
	}
	return provided.Minor >= requested.Minor
}

// CheckVersion returns nil if provided is [Compatible] with requested, and
// otherwise an error wrapping [ErrVersion] that names both versions and the
// rule that failed. what names the thing being versioned, for example
// `interface "dynop.Text"`.
func CheckVersion(what string, provided, requested Version) error {
	if Compatible(provided, requested) {
		return nil
	}
	var rule string
	switch {
	case provided.Major != requested.Major:
		rule = fmt.Sprintf("major versions differ (%d vs %d)", provided.Major, requested.Major)
	case provided.Major == 0:
		rule = fmt.Sprintf("with major version 0 the minor versions must match (%d vs %d)", provided.Minor, requested.Minor)
	default:
		rule = fmt.Sprintf("provided minor %d is older than requested minor %d", provided.Minor, requested.Minor)
	}
	return fmt.Errorf("%w: %s: requested %s or newer, provided %s: %s", ErrVersion, what, requested, provided, rule)
}
