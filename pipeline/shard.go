package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// A Shard is one of Count disjoint shares of a run's inputs, numbered
// from 0: running a pipeline once per shard, on as many machines, runs
// every input exactly once. An input belongs to the shard given by a
// stable hash (SHA-256) of the path of its file relative to its input's
// root (the directory listed, or a glob's directory before its first
// wildcard), so the shares do not depend on where the files are mounted,
// and adding files moves no other file to another shard. With several
// inputs, the first one's files decide. Outputs are named as in a run
// over all the inputs. The zero Shard, like any with Count 1, is all of
// them.
type Shard struct {
	Index, Count int
}

// ParseShard reads a shard written "I/N", such as "0/4", and checks it
// as Validate does.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want I/N, two whole numbers with 0 ≤ I < N, such as 0/4", s)
	}
	sh := Shard{Index: index, Count: count}
	return sh, sh.Validate()
}

// Validate reports a shard that is not one of its count: it needs
// 0 ≤ Index < Count.
func (sh Shard) Validate() error {
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return fmt.Errorf("shard %d/%d: want I/N with 0 ≤ I < N (N at least 1)", sh.Index, sh.Count)
	}
	return nil
}

// String writes the shard as ParseShard reads it.
func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.Index, sh.Count) }

// has reports whether the input whose path relative to its root is rel
// belongs to the shard.
func (sh Shard) has(rel string) bool {
	if sh.Count <= 1 {
		return true
	}
	sum := sha256.Sum256([]byte(rel))
	return binary.BigEndian.Uint64(sum[:8])%uint64(sh.Count) == uint64(sh.Index)
}
