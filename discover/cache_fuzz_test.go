package discover

import (
	"bytes"
	"encoding/gob"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/schema"
)

// encodeCache returns f as a cache file holds it, as cache.save writes it.
func encodeCache(tb testing.TB, f *cacheFile) []byte {
	tb.Helper()
	var buf bytes.Buffer
	buf.WriteString(cacheMagic)
	if err := gob.NewEncoder(&buf).Encode(f); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// seedCache is a cache with an entry of each kind: a plugin with info and
// a signature check, and a file that failed.
func seedCache(tb testing.TB) *cacheFile {
	tb.Helper()
	info, err := newCachedInfo(schema.Plugin{
		ID: "acme.plugin.blur", Version: iface.V(1, 2, 3), APIVersion: schema.APIVersion,
		Interfaces: []iface.Desc{{UID: iface.MustParseUID("5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10"), Name: "acme.Blur", Version: iface.V(1, 0, 0)}},
		Operators: []schema.Op{{Name: "acme.Blur", Args: []schema.Arg{{Name: "sigma", Type: schema.Float, Default: 1.5}},
			Devices: []schema.Device{schema.CPU}}},
		Requirements: schema.Requirements{OS: []string{"linux"}, CPUFeatures: []string{"avx2"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return &cacheFile{API: schema.APIVersion.String(), Entries: map[string]*cacheEntry{
		"/plugins/libblur.so": {Binary: stamp{Size: 1}, Manifest: &stamp{Size: 2}, Format: "native", SHA256: make([]byte, 32),
			Info: info, Loader: []byte(`{}`), Trust: "require:abc", Signer: "0123456789abcdef"},
		"/plugins/libbad.so": {Binary: stamp{Size: 3}, Format: "native",
			Err: &savedError{Kinds: []string{"format"}, Msg: "not a plugin file"}},
	}}
}

// FuzzDecodeCache checks the registry cache reader on any bytes: no panic
// and no recovered panic (gob must refuse bad input by itself); an error
// says what is wrong; a cache that decodes has info or an error in every
// entry, its infos either convert back to schema.Plugin or fail with an
// error, it writes back to bytes that decode to the same cache; and
// loadCache over such a file never fails: it keeps the cache or starts
// empty.
func FuzzDecodeCache(f *testing.F) {
	good := encodeCache(f, seedCache(f))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("dynop.registry/v1\n" + string(good[len(cacheMagic):])))
	f.Add([]byte(cacheMagic))
	f.Add([]byte("garbage"))
	f.Add(encodeCache(f, &cacheFile{API: "9.9.9", Entries: map[string]*cacheEntry{"x": {}}}))
	dir := f.TempDir()
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCache(data)
		if err != nil {
			if c != nil {
				t.Errorf("decodeCache failed (%v) but returned a cache", err)
			}
			if strings.TrimSpace(err.Error()) == "" || strings.Contains(err.Error(), "panicked") {
				t.Errorf("decodeCache(%q): error %q", data, err)
			}
			return
		}
		for path, e := range c.Entries {
			if e == nil || e.Info == nil && e.Err == nil {
				t.Fatalf("entry %q has neither info nor error", path)
			}
			if e.Info != nil {
				if info, err := e.Info.info(); err == nil && info.ID != e.Info.ID {
					t.Errorf("entry %q: info %q converts to %q", path, e.Info.ID, info.ID)
				}
			}
		}
		again, err := decodeCache(encodeCache(t, c))
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Errorf("a decoded cache writes back as one that decodes to %+v, %v; want %+v", again, err, c)
		}
		// Through a file, for caches only: writing one costs more than
		// decoding it.
		if err := os.WriteFile(filepath.Join(dir, CacheFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		lc := loadCache(dir, log)
		switch {
		case c.API == lc.file.API && !reflect.DeepEqual(lc.file, *c):
			t.Errorf("loadCache read %+v; decodeCache %+v", lc.file, *c)
		case c.API != lc.file.API && (len(lc.file.Entries) != 0 || !lc.dirty):
			t.Errorf("loadCache kept a cache of API %q", c.API)
		}
	})
}

// TestSeedCache checks FuzzDecodeCache's seed: it decodes, and loadCache
// keeps it.
func TestSeedCache(t *testing.T) {
	want := seedCache(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CacheFile), encodeCache(t, want), 0o644); err != nil {
		t.Fatal(err)
	}
	c := loadCache(dir, slog.New(slog.DiscardHandler))
	if c.dirty || !reflect.DeepEqual(&c.file, want) {
		t.Fatalf("loadCache = %+v (dirty %v), want %+v", c.file, c.dirty, want)
	}
	info, err := c.file.Entries["/plugins/libblur.so"].Info.info()
	if err != nil || info.Operators[0].Args[0].Default != 1.5 {
		t.Errorf("info() = %+v, %v", info, err)
	}
}
