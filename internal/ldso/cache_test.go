package ldso

import (
	"bytes"
	"encoding/binary"
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/dynop/dynop/internal/testutil"
)

func TestParseCacheOfThisMachine(t *testing.T) {
	data, err := os.ReadFile(DefaultCachePath)
	if err != nil {
		t.Skip(err)
	}
	entries, err := ParseCache(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("no entries")
	}
	want := int32(-1)
	switch runtime.GOARCH {
	case "amd64":
		want = x8664
	case "arm64":
		want = CacheFlagELFLibc6 | CacheFlagAArch64Lib64
	}
	found := false
	for _, e := range entries {
		if e.Key == "libc.so.6" && (want < 0 || e.Flags == want) {
			found = true
			if _, err := os.Stat(e.Value); err != nil {
				t.Errorf("libc.so.6's entry: %v", err)
			}
		}
	}
	if !found {
		t.Errorf("no libc.so.6 entry with flags %#x in %d entries", want, len(entries))
	}
}

func TestParseCacheFormats(t *testing.T) {
	entries := []cacheEntry{
		{"libfoo.so.1", "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1", x8664, hwcapExtension | 1},
		{"libfoo.so.1", "/usr/lib/x86_64-linux-gnu/libfoo.so.1", x8664, 0},
		{"libfoo.so.1", "/usr/lib/i386-linux-gnu/libfoo.so.1", CacheFlagELFLibc6, 0},
	}
	want := []CacheEntry{
		{"libfoo.so.1", "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1", x8664, hwcapExtension | 1, "x86-64-v3"},
		{"libfoo.so.1", "/usr/lib/x86_64-linux-gnu/libfoo.so.1", x8664, 0, ""},
		{"libfoo.so.1", "/usr/lib/i386-linux-gnu/libfoo.so.1", CacheFlagELFLibc6, 0, ""},
	}
	withISALevel := append([]cacheEntry(nil), entries...)
	withISALevel[0].hwcap |= 3 << 32 // ISA-level bits beside the extension bit
	wantISALevel := append([]CacheEntry(nil), want...)
	wantISALevel[0].HWCap |= 3 << 32
	plain := func(w []CacheEntry) []CacheEntry {
		var p []CacheEntry
		for _, e := range w {
			e.HWCap, e.HWCapsSubdir = 0, ""
			p = append(p, e)
		}
		return p
	}
	noHWCaps := append([]cacheEntry(nil), entries...)
	noHWCaps[0].hwcap = 0
	for _, c := range []struct {
		name string
		data []byte
		want []CacheEntry
	}{
		{"new", newFormatCache(entries, []string{"x86-64-v2", "x86-64-v3"}), want},
		{"new, ISA level bits", newFormatCache(withISALevel, []string{"x86-64-v2", "x86-64-v3"}), wantISALevel},
		{"old", oldFormatCache(noHWCaps, false), plain(want)},
		{"old with new", oldFormatCache(noHWCaps, true), plain(want)},
		{"new, no entries", newFormatCache(nil, nil), []CacheEntry{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseCache(c.data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseCacheErrors(t *testing.T) {
	entries := []cacheEntry{{"libfoo.so.1", "/lib/libfoo.so.1", x8664, 0}}
	good := newFormatCache(entries, nil)
	withHWCaps := newFormatCache([]cacheEntry{{"libfoo.so.1", "/lib/libfoo.so.1", x8664, hwcapExtension | 1}}, []string{"x86-64-v2"})
	old := oldFormatCache(entries, false)
	le := binary.LittleEndian
	patch := func(data []byte, at int, f func([]byte)) []byte {
		c := bytes.Clone(data)
		f(c[at:])
		return c
	}
	put32 := func(v uint32) func([]byte) { return func(b []byte) { le.PutUint32(b, v) } }
	firstKey := newHeaderSize + 4
	extensionAt := int(le.Uint32(withHWCaps[32:]))
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{`bad magic ""`, newMagic, oldMagic}},
		{"other file", []byte("\x7fELF\x02\x01\x01"), []string{`bad magic "\x7fELF\x02\x01\x01"`}},
		{"new header cut", good[:newHeaderSize-1], []string{"truncated: 47 bytes, shorter than the 48-byte header"}},
		{"new entries cut", good[:newHeaderSize+newEntrySize-1], []string{"truncated: 1 entries need 72 bytes, the cache has 71"}},
		{"huge count", patch(good, 20, put32(0xffffffff)), []string{"truncated: 4294967295 entries need"}},
		{"byte order", patch(good, 28, func(b []byte) { b[0] = 1 }), []string{"byte-order flag 1 is neither"}},
		{"key offset", patch(good, firstKey, put32(uint32(len(good)))), []string{"entry 0: key: string offset", "out of range (string table of"}},
		{"value offset", patch(good, firstKey+4, put32(1<<31)), []string{"entry 0: value: string offset 2147483648 out of range"}},
		{"no NUL", good[:newHeaderSize+newEntrySize+int(le.Uint32(good[24:]))-1], []string{"entry 0: value: string at offset", "has no terminating NUL"}},
		{"extension past end", patch(good, 32, put32(uint32(len(good)))), []string{"extension directory at offset", "is past the end"}},
		{"extension magic", patch(withHWCaps, extensionAt, put32(7)), []string{"extension directory at offset", "bad magic 0x7, want 0xeaa42174"}},
		{"extension count", patch(withHWCaps, extensionAt+4, put32(1000)), []string{"1000 sections do not fit"}},
		{"hwcaps section size", patch(withHWCaps, extensionAt+8+16+12, put32(3)), []string{"glibc-hwcaps section: 3 bytes at offset", "not a multiple of 4"}},
		{"hwcaps name", patch(withHWCaps, extensionAt+8+32, put32(1<<30)), []string{"glibc-hwcaps section: name 0: string offset 1073741824 out of range"}},
		{"hwcaps index", patch(withHWCaps, newHeaderSize+16, put32(5)), []string{"entry 0 (libfoo.so.1): glibc-hwcaps index 5, but the cache names 1 subdirectories"}},
		{"old header cut", old[:oldHeaderSize-1], []string{"truncated: 15 bytes, shorter than the old format's 16-byte header"}},
		{"old entries cut", old[:oldHeaderSize+oldEntrySize-1], []string{"truncated: 1 entries of the old format need 28 bytes, the cache has 27"}},
		{"old key offset", patch(old, oldHeaderSize+4, put32(99)), []string{"entry 0: key: string offset 99 out of range"}},
		{"old value no NUL", old[:len(old)-1], []string{"entry 0: value: string at offset 12 has no terminating NUL"}},
		{"old with new, new cut", oldFormatCache(entries, true)[:oldHeaderSize+oldEntrySize+4+newHeaderSize], []string{"truncated: 1 entries need 72 bytes", "(the new format at offset 32)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseCache(c.data)
			testutil.WantErr(t, err, ErrBadCache, append([]string{"bad ld.so.cache: "}, c.want...)...)
			if got != nil {
				t.Errorf("entries %v beside the error", got)
			}
		})
	}
}

// FuzzParseCache: ParseCache never panics, and the strings of every entry
// it returns are in the data.
func FuzzParseCache(f *testing.F) {
	if data, err := os.ReadFile(DefaultCachePath); err == nil {
		f.Add(data)
	}
	entries := []cacheEntry{
		{"libfoo.so.1", "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1", x8664, hwcapExtension | 1},
		{"libfoo.so.1", "/usr/lib/x86_64-linux-gnu/libfoo.so.1", x8664, 0},
	}
	f.Add(newFormatCache(entries, []string{"x86-64-v2", "x86-64-v3"}))
	f.Add(newFormatCache(entries[1:], nil))
	f.Add(oldFormatCache(entries[1:], false))
	f.Add(oldFormatCache(entries[1:], true))
	f.Add([]byte(newMagic))
	f.Add([]byte(oldMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseCache(data)
		if err != nil {
			if entries != nil {
				t.Fatalf("entries beside the error %v", err)
			}
			return
		}
		for _, e := range entries {
			for _, s := range []string{e.Key, e.Value, e.HWCapsSubdir} {
				if !bytes.Contains(data, []byte(s+"\x00")) {
					t.Fatalf("entry %+v: %q is not a NUL-terminated string of the data", e, s)
				}
			}
		}
	})
}
