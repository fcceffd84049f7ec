// Package suggest finds the known name closest to a mistyped one, for
// "did you mean" hints in error messages.
package suggest

// Nearest returns the name in known closest to name by edit distance, if
// it is close enough to be a plausible typo (at most a third of the
// longer name's length, and at most 3 edits), or "" if none is.
func Nearest(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := distance(name, k)
		limit := min(3, max(1, max(len(name), len(k))/3))
		if d > limit {
			continue
		}
		if best == "" || d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// distance is the edit distance between a and b, in bytes: insertions,
// deletions, substitutions and swaps of two adjacent bytes ("lsit" is one
// edit from "list"), each substring edited once (optimal string
// alignment).
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1) // row i-2
	prev := make([]int, len(b)+1)  // row i-1
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
