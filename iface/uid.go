package iface

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// UID is a 128-bit identifier of an interface or struct type, written in
// the usual GUID text form, for example AD9DC29C-0A89-4A4E-B900-A7183B48336E.
//
// The bytes are held in the order the text spells them (RFC 9562 network
// order), so the same 16 bytes cross a C ABI unchanged. A GUID written as a
// C initializer with fields (data1, data2, data3, data4), such as NVIGI's
// {0xad9dc29c, 0xa89, 0x4a4e, {0xb9, 0x0, 0xa7, 0x18, 0x3b, 0x48, 0x33, 0x6e}},
// spells the same digits: AD9DC29C-0A89-4A4E-B900-A7183B48336E.
type UID [16]byte

// parseUID parses the GUID text form: 32 hexadecimal digits grouped
// 8-4-4-4-12 by hyphens, in either case, optionally enclosed in braces.
// Errors wrap [ErrSyntax] and say what was wrong where; the UID returned
// with an error is the zero UID.
func parseUID(s string) (UID, error) {
	var u UID
	text := s
	if strings.HasPrefix(text, "{") || strings.HasSuffix(text, "}") {
		if len(text) < 2 || text[0] != '{' || text[len(text)-1] != '}' {
			return UID{}, fmt.Errorf("%w: UID %q: unbalanced braces", ErrSyntax, s)
		}
		text = text[1 : len(text)-1]
	}
	if len(text) != 36 {
		return UID{}, fmt.Errorf("%w: UID %q: want 36 characters in the form XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX, got %d", ErrSyntax, s, len(text))
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if text[i] != '-' {
				return UID{}, fmt.Errorf("%w: UID %q: want '-' at position %d, got %q", ErrSyntax, s, i+1, text[i])
			}
			i++
			continue
		}
		b, err := hex.DecodeString(text[i : i+2])
		if err != nil {
			return UID{}, fmt.Errorf("%w: UID %q: %q at position %d is not hexadecimal", ErrSyntax, s, text[i:i+2], i+1)
		}
		u[j] = b[0]
		j++
		i += 2
	}
	return u, nil
}

// MustParseUID returns the UID that s writes in the GUID text form: 32
// hexadecimal digits grouped 8-4-4-4-12 by hyphens, in either case,
// optionally enclosed in braces. It panics if s is malformed. It is meant
// for package-level variables holding well-known UIDs; [UID.UnmarshalText]
// reads UIDs that come from elsewhere.
func MustParseUID(s string) UID {
	u, err := parseUID(s)
	if err != nil {
		panic(err)
	}
	return u
}

// String returns the upper-case GUID text form without braces.
func (u UID) String() string {
	var buf [36]byte
	u.appendText(buf[:0])
	return string(buf[:])
}

func (u UID) appendText(dst []byte) []byte {
	const digits = "0123456789ABCDEF"
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, digits[b>>4], digits[b&0xF])
	}
	return dst
}

// IsZero reports whether u is the all-zero UID, which names no interface.
func (u UID) IsZero() bool { return u == UID{} }

// MarshalText implements [encoding.TextMarshaler] with the form of [UID.String].
func (u UID) MarshalText() ([]byte, error) { return u.appendText(make([]byte, 0, 36)), nil }

// UnmarshalText implements [encoding.TextUnmarshaler]: it reads the form
// [MustParseUID] takes. Errors wrap [ErrSyntax] and say what was wrong
// where.
func (u *UID) UnmarshalText(text []byte) error {
	v, err := parseUID(string(text))
	if err != nil {
		return err
	}
	*u = v
	return nil
}
