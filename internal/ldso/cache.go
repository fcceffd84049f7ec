package ldso

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadCache is wrapped by the errors of [ParseCache].
var ErrBadCache = errors.New("bad ld.so.cache")

// CacheEntry is one library of an ld.so.cache.
type CacheEntry struct {
	Key   string // the soname
	Value string // the library's path
	// Flags are the entry's kind and ABI: CacheFlagELFLibc6 and one of the
	// CacheFlag...Lib64 (or LibX32 ...) values in the upper byte, which
	// tell x86-64 entries from i386 and x32 ones.
	Flags int32
	// HWCap is the entry's hwcap field (0 in the old format).
	HWCap uint64
	// HWCapsSubdir names the glibc-hwcaps subdirectory of the entry
	// ("x86-64-v3") where HWCap says it is in one; "" otherwise.
	HWCapsSubdir string
}

// Flags of ld.so.cache entries (glibc's FLAG_* in dl-cache.h), the ones
// this package checks.
const (
	CacheFlagELF          = 0x0001
	CacheFlagELFLibc6     = 0x0003
	CacheFlagX8664Lib64   = 0x0300
	CacheFlagX8664LibX32  = 0x0800
	CacheFlagAArch64Lib64 = 0x0a00
)

// The cache's layout (glibc's dl-cache.h).
const (
	oldMagic       = "ld.so-1.7.0"
	oldHeaderSize  = 16 // magic, one byte of padding, nlibs
	oldEntrySize   = 12 // flags, key, value
	newMagic       = "glibc-ld.so.cache1.1"
	newHeaderSize  = 48 // magic and version, nlibs, len_strings, flags, padding, extension_offset, unused
	newEntrySize   = 24 // flags, key, value, osversion, hwcap
	newAlign       = 8  // the new format's alignment after the old one
	extensionMagic = 0xeaa42174
	extensionHWCap = 1       // cache_extension_tag_glibc_hwcaps
	hwcapExtension = 1 << 62 // DL_CACHE_HWCAP_EXTENSION
	// The ISA-level bits at the bottom of hwcap's upper half, which may
	// accompany hwcapExtension (DL_CACHE_HWCAP_ISA_LEVEL_MASK).
	hwcapISALevelMask = 1<<10 - 1
)

// ParseCache parses the bytes of an ld.so.cache: glibc's
// "glibc-ld.so.cache1.1" format, or the old "ld.so-1.7.0" format, on its
// own or with the new one following it as glibc before 2.32 wrote by
// default. Where both are there, the entries are the new format's, as
// ld.so reads them. It never panics; its errors wrap [ErrBadCache] and say
// what is wrong.
func ParseCache(data []byte) ([]CacheEntry, error) {
	entries, err := parseCache(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCache, err)
	}
	return entries, nil
}

func parseCache(data []byte) ([]CacheEntry, error) {
	if bytes.HasPrefix(data, []byte(newMagic)) {
		return parseNew(data, "")
	}
	if !bytes.HasPrefix(data, []byte(oldMagic)) {
		n := min(len(data), len(newMagic))
		return nil, fmt.Errorf("bad magic %q: want %q or %q", data[:n], newMagic, oldMagic)
	}
	if len(data) < oldHeaderSize {
		return nil, fmt.Errorf("truncated: %d bytes, shorter than the old format's %d-byte header", len(data), oldHeaderSize)
	}
	order := binary.ByteOrder(binary.NativeEndian)
	nlibs := uint64(order.Uint32(data[12:]))
	end := oldHeaderSize + nlibs*oldEntrySize
	if end > uint64(len(data)) {
		return nil, fmt.Errorf("truncated: %d entries of the old format need %d bytes, the cache has %d", nlibs, end, len(data))
	}
	newStart := (end + newAlign - 1) &^ (newAlign - 1)
	if newStart <= uint64(len(data)) && bytes.HasPrefix(data[newStart:], []byte(newMagic)) {
		return parseNew(data[newStart:], fmt.Sprintf(" (the new format at offset %d)", newStart))
	}
	// The old format alone: strings are indexed from the end of the entries.
	strs := data[end:]
	entries := make([]CacheEntry, 0, nlibs)
	for i := range nlibs {
		e := data[oldHeaderSize+i*oldEntrySize:]
		key, err := cString(strs, order.Uint32(e[4:]))
		if err != nil {
			return nil, fmt.Errorf("entry %d: key: %v", i, err)
		}
		value, err := cString(strs, order.Uint32(e[8:]))
		if err != nil {
			return nil, fmt.Errorf("entry %d: value: %v", i, err)
		}
		entries = append(entries, CacheEntry{Key: key, Value: value, Flags: int32(order.Uint32(e))})
	}
	return entries, nil
}

// parseNew parses the new format at the start of data; strings, entries
// and the extension directory are indexed from there. where says, for
// messages, where that is in the file.
func parseNew(data []byte, where string) ([]CacheEntry, error) {
	if len(data) < newHeaderSize {
		return nil, fmt.Errorf("truncated: %d bytes, shorter than the %d-byte header%s", len(data), newHeaderSize, where)
	}
	var order binary.ByteOrder
	switch endian := data[28]; endian {
	case 0: // written before glibc 2.33 recorded it: the host's
		order = binary.NativeEndian
	case 2:
		order = binary.LittleEndian
	case 3:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("byte-order flag %d is neither 0 (unset), 2 (little-endian) nor 3 (big-endian)%s", endian, where)
	}
	nlibs := uint64(order.Uint32(data[20:]))
	end := newHeaderSize + nlibs*newEntrySize
	if end > uint64(len(data)) {
		return nil, fmt.Errorf("truncated: %d entries need %d bytes, the cache has %d%s", nlibs, end, len(data), where)
	}
	subdirs, err := hwcapsSubdirs(data, order, order.Uint32(data[32:]))
	if err != nil {
		return nil, fmt.Errorf("%v%s", err, where)
	}
	entries := make([]CacheEntry, 0, nlibs)
	for i := range nlibs {
		e := data[newHeaderSize+i*newEntrySize:]
		key, err := cString(data, order.Uint32(e[4:]))
		if err != nil {
			return nil, fmt.Errorf("entry %d: key: %v%s", i, err, where)
		}
		value, err := cString(data, order.Uint32(e[8:]))
		if err != nil {
			return nil, fmt.Errorf("entry %d: value: %v%s", i, err, where)
		}
		entry := CacheEntry{Key: key, Value: value, Flags: int32(order.Uint32(e)), HWCap: order.Uint64(e[16:])}
		if (entry.HWCap>>32)&^hwcapISALevelMask == hwcapExtension>>32 {
			index := uint32(entry.HWCap)
			if uint64(index) >= uint64(len(subdirs)) {
				return nil, fmt.Errorf("entry %d (%s): glibc-hwcaps index %d, but the cache names %d subdirectories%s", i, key, index, len(subdirs), where)
			}
			entry.HWCapsSubdir = subdirs[index]
		}
		entries = append(entries, entry)
	}
	return entries, nil
}

// hwcapsSubdirs returns the names in the glibc-hwcaps section of the
// extension directory at offset of data (0: none).
func hwcapsSubdirs(data []byte, order binary.ByteOrder, offset uint32) ([]string, error) {
	if offset == 0 {
		return nil, nil
	}
	dir := uint64(offset)
	if dir+8 > uint64(len(data)) {
		return nil, fmt.Errorf("extension directory at offset %d is past the end (%d bytes)", offset, len(data))
	}
	if magic := order.Uint32(data[dir:]); magic != extensionMagic {
		return nil, fmt.Errorf("extension directory at offset %d: bad magic %#x, want %#x", offset, magic, extensionMagic)
	}
	count := uint64(order.Uint32(data[dir+4:]))
	if dir+8+count*16 > uint64(len(data)) {
		return nil, fmt.Errorf("extension directory at offset %d: %d sections do not fit in %d bytes", offset, count, len(data))
	}
	var names []string
	for i := range count {
		s := data[dir+8+i*16:]
		if tag := order.Uint32(s); tag != extensionHWCap {
			continue // the generator's name, or a later glibc's
		}
		start, size := uint64(order.Uint32(s[8:])), uint64(order.Uint32(s[12:]))
		if start+size > uint64(len(data)) || size%4 != 0 {
			return nil, fmt.Errorf("glibc-hwcaps section: %d bytes at offset %d do not fit in %d bytes, or are not a multiple of 4", size, start, len(data))
		}
		names = names[:0]
		for j := uint64(0); j < size; j += 4 {
			name, err := cString(data, order.Uint32(data[start+j:]))
			if err != nil {
				return nil, fmt.Errorf("glibc-hwcaps section: name %d: %v", j/4, err)
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// cString returns the NUL-terminated string at offset of table.
func cString(table []byte, offset uint32) (string, error) {
	if uint64(offset) >= uint64(len(table)) {
		return "", fmt.Errorf("string offset %d out of range (string table of %d bytes)", offset, len(table))
	}
	n := bytes.IndexByte(table[offset:], 0)
	if n < 0 {
		return "", fmt.Errorf("string at offset %d has no terminating NUL", offset)
	}
	return string(table[offset : uint64(offset)+uint64(n)]), nil
}
