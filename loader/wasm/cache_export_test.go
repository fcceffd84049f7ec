package wasm

import "crypto/sha256"

// The compilation cache's insides, for the tests of package wasm_test.

// CacheStoreDir is the store's directory under Options.CacheDir/wasm.
const CacheStoreDir = storeDir

// CacheStats counts what the compilation cache did in this process.
type CacheStats struct{ Hits, Compiles, Refused, Stored int64 }

// ReadCacheStats returns the counts so far.
func ReadCacheStats() CacheStats {
	return CacheStats{cacheStats.hits.Load(), cacheStats.compiles.Load(), cacheStats.refused.Load(), cacheStats.stored.Load()}
}

// Sub returns s - o.
func (s CacheStats) Sub(o CacheStats) CacheStats {
	return CacheStats{s.Hits - o.Hits, s.Compiles - o.Compiles, s.Refused - o.Refused, s.Stored - o.Stored}
}

// SetKeyFilePath makes f say where the cache key is kept (nil: the
// default, under os.UserConfigDir) and returns what said it before. It
// forgets the keys read.
func SetKeyFilePath(f func() (string, error)) func() (string, error) {
	if f == nil {
		f = defaultKeyFilePath
	}
	keyMu.Lock()
	prev := keyFilePath
	keyFilePath = f
	keyMu.Unlock()
	ForgetCacheKeys()
	return prev
}

// ForgetCacheKeys forgets the keys read, the entries kept in memory and
// the cache directories cleaned, as a new process would have.
func ForgetCacheKeys() {
	keyMu.Lock()
	keys = map[string]*cacheKey{}
	processKey = nil
	keyMu.Unlock()
	memEntries.Clear()
	legacyDone.Clear()
}

// EncodeCacheEntry makes a store entry of the module whose SHA-256 is
// sum, MACed with secret.
func EncodeCacheEntry(secret []byte, sum [sha256.Size]byte, tag, wkey string, payload []byte) []byte {
	return encodeEntry(secret, sum, tag, wkey, payload)
}
