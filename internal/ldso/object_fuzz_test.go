package ldso

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzReadObject: reading the dynamic section of any bytes (a plugin
// file is outside input) never panics; it gives an Object or an error
// that wraps ErrNotELF or ErrNoDynamicSection or says what it could not
// read, and an Object's search path entries never contain ':'.
func FuzzReadObject(f *testing.F) {
	// Small real objects: the fuzzer mutates large inputs slowly.
	for _, path := range []string{"/usr/lib/x86_64-linux-gnu/libdl.so.2", "/usr/lib/aarch64-linux-gnu/libdl.so.2"} {
		if data, err := os.ReadFile(path); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("not an object"))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := readObject(bytes.NewReader(data), "/fuzz/libx.so")
		if err != nil {
			if obj != nil {
				t.Fatalf("an object and an error: %+v, %v", obj, err)
			}
			return
		}
		for _, e := range append(obj.RunPath, obj.RPath...) {
			if strings.Contains(e, ":") {
				t.Fatalf("search path entry %q holds a ':'", e)
			}
		}
	})
}
