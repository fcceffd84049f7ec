package sign

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sha256("abc"), from FIPS 180-2.
const abcSHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

func TestDigestText(t *testing.T) {
	d, err := parseDigest(abcSHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != abcSHA256 {
		t.Errorf("String() = %s, want %s", got, abcSHA256)
	}
	if d.IsZero() {
		t.Error("IsZero() of a parsed digest = true")
	}
	if !(Digest{}).IsZero() {
		t.Error("IsZero() of the zero Digest = false")
	}
	text, err := d.MarshalText()
	if err != nil || string(text) != abcSHA256 {
		t.Errorf("MarshalText() = %s, %v, want %s", text, err, abcSHA256)
	}

	up, err := parseDigest(strings.ToUpper(abcSHA256))
	if err != nil {
		t.Fatalf("parseDigest(upper case): %v", err)
	}
	if up != d {
		t.Errorf("upper-case digest parsed to %s, want %s", up, d)
	}
}

func TestDigestJSON(t *testing.T) {
	type doc struct{ D Digest }
	in := doc{testDigest("abc")}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"D":"` + abcSHA256 + `"}`; string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("JSON round trip gave %s, want %s", out.D, in.D)
	}
}

func TestParseDigestErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", "0 characters, want 64 hex digits"},
		{"abc", "3 characters, want 64 hex digits"},
		{abcSHA256 + "00", "66 characters, want 64 hex digits"},
		{abcSHA256[:5] + "g" + abcSHA256[6:], `"g" at offset 5`},
		{abcSHA256[:63] + " ", `" " at offset 63`},
	} {
		d := testDigest("keep")
		err := d.UnmarshalText([]byte(tc.in))
		checkErr(t, err, nil, tc.want)
		if d != testDigest("keep") {
			t.Errorf("UnmarshalText(%q) changed the digest on error", tc.in)
		}
		if _, err := parseDigest(tc.in); err == nil {
			t.Errorf("parseDigest(%q) succeeded", tc.in)
		}
	}
}

func TestHashReader(t *testing.T) {
	d, n, err := HashReader(strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != abcSHA256 || n != 3 {
		t.Errorf("HashReader(abc) = %s, %d, want %s, 3", d, n, abcSHA256)
	}
}

func TestHashFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "libx.so")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, n, err := HashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != abcSHA256 || n != 3 {
		t.Errorf("HashFile = %s, %d, want %s, 3", d, n, abcSHA256)
	}

	missing := filepath.Join(dir, "missing.so")
	_, _, err = HashFile(missing)
	checkErr(t, err, []error{os.ErrNotExist}, missing)

	_, _, err = HashFile(dir)
	checkErr(t, err, nil, dir)
}
