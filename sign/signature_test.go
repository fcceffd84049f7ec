package sign

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestSignaturePath(t *testing.T) {
	if got := SignaturePath("plugins/libx.so"); got != "plugins/libx.so.dynop.sig" {
		t.Errorf("SignaturePath = %q", got)
	}
}

func TestMessage(t *testing.T) {
	b, m := testDigest("binary"), testDigest("manifest")
	want := "dynop.signature/v1\n" +
		"key 0123456789abcdef\n" +
		"binary sha256 " + b.String() + "\n" +
		"manifest sha256 " + m.String() + "\n"
	if got := string(message("0123456789abcdef", b, m)); got != want {
		t.Errorf("Message =\n%s\nwant\n%s", got, want)
	}
}

func TestSignVerify(t *testing.T) {
	pub, priv := testKey(1)
	b, m := testDigest("binary"), testDigest("manifest")
	s := Sign(priv, b, m)
	if s.KeyID != KeyID(pub) || s.Binary != b || s.Manifest != m || len(s.Sig) != 64 {
		t.Fatalf("Sign = %+v", s)
	}
	other, _ := testKey(2)
	ts := NewTrustStore(other, pub)
	if err := ts.Verify(s, b, m); err != nil {
		t.Fatalf("Verify of a good signature: %v", err)
	}
}

func TestVerifyFailures(t *testing.T) {
	pub, priv := testKey(1)
	_, untrusted := testKey(3)
	ts := NewTrustStore(pub)
	b, m := testDigest("binary"), testDigest("manifest")
	good := Sign(priv, b, m)
	b2, m2 := testDigest("binary v2"), testDigest("manifest v2")

	flipped := good
	flipped.Sig = bytes.Clone(good.Sig)
	flipped.Sig[10] ^= 0x04
	edited := good // someone edits the signature file to match a new binary
	edited.Binary = b2
	foreign := Sign(untrusted, b, m)
	noID := good
	noID.KeyID = ""

	for _, tc := range []struct {
		name   string
		ts     *TrustStore
		s      Signature
		b, m   Digest
		target error
		want   []string
	}{
		{"binary changed", ts, good, b2, m, ErrSignature, []string{
			"the plugin binary changed since it was signed",
			"signed sha256 " + b.String()[:16] + "…, now " + b2.String()[:16] + "…"}},
		{"manifest changed", ts, good, b, m2, ErrSignature, []string{
			"the plugin manifest changed since it was signed",
			"signed sha256 " + m.String()[:16] + "…, now " + m2.String()[:16] + "…"}},
		{"both changed", ts, good, b2, m2, ErrSignature, []string{"binary changed"}},
		{"signature file edited", ts, edited, b2, m, ErrSignature, []string{"signature by key " + good.KeyID + " does not verify"}},
		{"flipped bit", ts, flipped, b, m, ErrSignature, []string{"signature by key " + good.KeyID + " does not verify"}},
		{"short signature", ts, Signature{KeyID: good.KeyID, Binary: b, Manifest: m, Sig: good.Sig[:10]}, b, m, ErrSignature, []string{"does not verify"}},
		{"untrusted key", ts, foreign, b, m, ErrUnknownKey, []string{
			"key not trusted", "signed by key " + foreign.KeyID, "not in the trust store (it has 1 key)"}},
		{"empty store", NewTrustStore(), good, b, m, ErrUnknownKey, []string{good.KeyID, "(it has 0 keys)"}},
		{"nil store", nil, good, b, m, ErrUnknownKey, []string{good.KeyID, "(it has 0 keys)"}},
		{"no key id", ts, noID, b, m, ErrSignature, []string{"names no key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ts.Verify(tc.s, tc.b, tc.m)
			checkErr(t, err, []error{ErrSignature, tc.target}, tc.want...)
		})
	}
}

func TestSignatureMarshal(t *testing.T) {
	_, priv := testKey(1)
	s := Sign(priv, testDigest("binary"), testDigest("manifest"))
	data := s.marshal()
	want := "{\n" +
		`  "schema": "dynop.signature/v1",` + "\n" +
		`  "key_id": "` + s.KeyID + `",` + "\n" +
		`  "binary_sha256": "` + s.Binary.String() + `",` + "\n" +
		`  "manifest_sha256": "` + s.Manifest.String() + `",` + "\n" +
		`  "signature": "` + base64.StdEncoding.EncodeToString(s.Sig) + `"` + "\n" +
		"}\n"
	if string(data) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", data, want)
	}
	got, err := parseSignature(data, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip gave %+v, want %+v", got, s)
	}
}

// signatureJSON returns the JSON object of a good signature file, to be
// edited and marshalled by a test.
func signatureJSON(t *testing.T) map[string]any {
	t.Helper()
	_, priv := testKey(1)
	var obj map[string]any
	if err := json.Unmarshal(Sign(priv, testDigest("b"), testDigest("m")).marshal(), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestParseSignatureErrors(t *testing.T) {
	_, priv := testKey(1)
	data := Sign(priv, testDigest("b"), testDigest("m")).marshal()
	edit := func(f func(map[string]any)) []byte {
		obj := signatureJSON(t)
		f(obj)
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	set := func(k string, v any) []byte { return edit(func(o map[string]any) { o[k] = v }) }
	del := func(ks ...string) []byte {
		return edit(func(o map[string]any) {
			for _, k := range ks {
				delete(o, k)
			}
		})
	}
	sig63 := base64.StdEncoding.EncodeToString(make([]byte, 63))

	for _, tc := range []struct {
		name string
		in   []byte
		want []string
	}{
		{"empty", nil, []string{"signature file: empty"}},
		{"blank", []byte(" \n"), []string{"empty"}},
		{"truncated", data[:len(data)/2], []string{"signature file: truncated", "JSON ends early"}},
		{"truncated at brace", data[:len(data)-2], []string{"truncated"}},
		{"not JSON", []byte("dynop signature\n"), []string{"not JSON", "invalid character"}},
		{"trailing garbage", append(bytes.Clone(data), "x"...), []string{"not JSON"}},
		{"array", []byte("[1, 2]"), []string{"not a JSON object (it is a JSON array)"}},
		{"no schema", del("schema"), []string{`missing field schema (want "dynop.signature/v1")`}},
		{"unknown schema", set("schema", "dynop.signature/v2"), []string{
			`unknown schema "dynop.signature/v2"`, `this host reads only "dynop.signature/v1"`}},
		{"schema not a string", set("schema", 2), []string{"schema is a JSON number, want a string"}},
		{"no key_id", del("key_id"), []string{"missing field key_id"}},
		{"no binary_sha256", del("binary_sha256"), []string{"missing field binary_sha256"}},
		{"no manifest_sha256", del("manifest_sha256"), []string{"missing field manifest_sha256"}},
		{"no signature", del("signature"), []string{"missing field signature"}},
		{"two missing", del("key_id", "signature"), []string{"missing fields key_id, signature"}},
		{"short key_id", set("key_id", "abc"), []string{`key_id "abc" is not a key id, want 16 hex digits`}},
		{"non-hex key_id", set("key_id", "0123456789abcdeg"), []string{`key_id "0123456789abcdeg" is not a key id`}},
		{"key_id a number", set("key_id", 12), []string{"key_id is a JSON number, want a string"}},
		{"short binary digest", set("binary_sha256", "abcd"), []string{"binary_sha256: sha256 digest is 4 characters, want 64"}},
		{"bad manifest digest", set("manifest_sha256", strings.Repeat("z", 64)), []string{`manifest_sha256: sha256 digest has "z" at offset 0`}},
		{"signature not base64", set("signature", "!!!"), []string{"signature is not standard base64"}},
		{"url base64", set("signature", strings.Repeat("_", 88)), []string{"signature is not standard base64"}},
		{"63-byte signature", set("signature", sig63), []string{"signature is 63 bytes, want 64"}},
		{"empty signature", set("signature", ""), []string{"signature is 0 bytes, want 64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSignature(tc.in, "")
			checkErr(t, err, []error{ErrSignature}, tc.want...)
			if !reflect.DeepEqual(s, Signature{}) {
				t.Errorf("got %+v with the error, want the zero Signature", s)
			}
		})
	}
}

func TestParseSignatureLenient(t *testing.T) {
	pub, priv := testKey(1)
	b, m := testDigest("b"), testDigest("m")
	want := Sign(priv, b, m)

	// Fields it does not know, as a newer writer may add.
	obj := signatureJSON(t)
	obj["comment"] = "release build"
	obj["signed_at"] = map[string]any{"unix": 1700000000}
	data, _ := json.Marshal(obj)
	got, err := parseSignature(data, "")
	if err != nil {
		t.Fatalf("extra fields: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("extra fields: got %+v, want %+v", got, want)
	}

	// Upper-case hex is read and the signature still verifies.
	obj = signatureJSON(t)
	for _, k := range []string{"key_id", "binary_sha256", "manifest_sha256"} {
		obj[k] = strings.ToUpper(obj[k].(string))
	}
	data, _ = json.Marshal(obj)
	got, err = parseSignature(data, "")
	if err != nil {
		t.Fatalf("upper case: %v", err)
	}
	if err := NewTrustStore(pub).Verify(got, b, m); err != nil {
		t.Errorf("upper case: %v", err)
	}
}

func TestSignatureFile(t *testing.T) {
	dir := t.TempDir()
	path := SignaturePath(filepath.Join(dir, "libx.so"))
	_, priv := testKey(1)
	s := Sign(priv, testDigest("b"), testDigest("m"))

	if err := os.WriteFile(path, []byte("old content"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteSignature(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSignature(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("ReadSignature = %+v, want %+v", got, s)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(data, s.marshal()) {
		t.Errorf("file holds %q (%v), want %q", data, err, s.marshal())
	}
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Errorf("signature file has mode %04o, want 0644", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only the signature (a temporary file left?)", len(entries))
	}

	// A relative path writes in the current directory.
	t.Chdir(dir)
	if err := WriteSignature("rel.so.dynop.sig", s); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSignature("rel.so.dynop.sig"); err != nil {
		t.Fatal(err)
	}
}

func TestWriteSignatureError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "libx.so.dynop.sig")
	err := WriteSignature(path, Signature{})
	checkErr(t, err, []error{fs.ErrNotExist}, "writing signature "+path)
}

func TestReadSignatureErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "libx.so.dynop.sig")
	_, err := ReadSignature(missing)
	checkErr(t, err, []error{ErrUnsigned, ErrSignature, fs.ErrNotExist}, "not signed", missing)

	_, priv := testKey(1)
	data := Sign(priv, testDigest("b"), testDigest("m")).marshal()
	cut := filepath.Join(dir, "cut.so.dynop.sig")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadSignature(cut)
	checkErr(t, err, []error{ErrSignature}, "signature file "+cut+": truncated")
	if errors.Is(err, ErrUnsigned) {
		t.Errorf("a truncated file gives %q, which wraps ErrUnsigned", err)
	}

	big := filepath.Join(dir, "big.so.dynop.sig")
	if err := os.WriteFile(big, make([]byte, maxSignatureFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadSignature(big)
	checkErr(t, err, []error{ErrSignature}, big, "too big")

	_, err = ReadSignature(dir)
	checkErr(t, err, []error{ErrSignature}, dir)
}
