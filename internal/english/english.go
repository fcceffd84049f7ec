// Package english writes counts of things in English for the messages of
// the command line and the packages it prints: "1 batch", "2 batches".
package english

import (
	"strconv"
	"strings"
)

// Plural returns n and noun, the noun in the plural unless n is 1 or -1:
// Plural(1, "batch") is "1 batch", Plural(2, "batch") "2 batches". For a
// noun of several words ("plugin file") the last one is inflected.
func Plural(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
}

// Noun returns noun in the plural unless n is 1 or -1, as [Plural] does,
// without the count: for "3/4 batches", where the count is written apart.
// It knows the regular English plurals (file → files, batch → batches,
// key → keys, dependency → dependencies); a noun already in the plural,
// or whose plural is not regular, should not be given.
func Noun(n int, noun string) string {
	if n == 1 || n == -1 || noun == "" {
		return noun
	}
	switch last := noun[len(noun)-1]; {
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"), last == 's', last == 'x', last == 'z':
		return noun + "es"
	case last == 'y' && len(noun) > 1 && !strings.ContainsRune("aeiouAEIOU", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// Quoted lists items, each quoted as Go quotes a string, joined as
// English joins alternatives with conj: Quoted([a b c], "or") is
// `"a", "b" or "c"`.
func Quoted(items []string, conj string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}
