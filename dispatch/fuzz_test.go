package dispatch_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dynop/dynop/dispatch"
)

// FuzzParse checks Parse, which reads DYNOP_CPU_FEATURES, on any text: no
// panic; an error wraps ErrUnknownFeature and quotes a name of the list
// that dispatch does not know; a set that parses has only known features,
// holds every name listed, and its names parse back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"avx2,fma", "-avx512f,-avx2", " sse2 , AVX ", "", ",,", "avx512bw", "asimd,sve",
		"none", "avx3", "avx2,,fma,", "popcnt,lzcnt,bmi1,bmi2,movbe,f16c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		s, err := dispatch.Parse(list)
		if err != nil {
			if !errors.Is(err, dispatch.ErrUnknownFeature) {
				t.Fatalf("Parse(%q): error %q does not wrap ErrUnknownFeature", list, err)
			}
			if s != 0 {
				t.Errorf("Parse(%q) failed but returned %v", list, s)
			}
			named := false
			for _, name := range strings.Split(list, ",") {
				name = strings.TrimSpace(name)
				_, known := dispatch.Lookup(strings.ToLower(name))
				if name != "" && !known && strings.Contains(err.Error(), strconv.Quote(name)) {
					named = true
				}
			}
			if !named {
				t.Errorf("Parse(%q): error %q quotes no unknown name of the list", list, err)
			}
			return
		}
		if u := s.Unknown(); u != 0 {
			t.Errorf("Parse(%q) = %v with unknown bits %#x", list, s, uint64(u))
		}
		for _, name := range strings.Split(list, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if ft, ok := dispatch.Lookup(name); !ok || !s.Has(ft) {
				t.Errorf("Parse(%q) = %v, which lacks %q", list, s, name)
			}
		}
		back, err := dispatch.Parse(strings.Join(s.Names(), ","))
		if err != nil || back != s {
			t.Errorf("Parse(%q) = %v; its names %q parse to %v, %v", list, s, s.Names(), back, err)
		}
		if s != 0 {
			if back, err := dispatch.Parse(s.String()); err != nil || back != s {
				t.Errorf("Parse(%q) = %v, %v; want %v", s.String(), back, err, s)
			}
		}
		if !s.Closure().Contains(s) || s.Closure().Closure() != s.Closure() {
			t.Errorf("Closure of %v = %v is not a closure holding it", s, s.Closure())
		}
	})
}
