package dispatch

import (
	"errors"
	"fmt"
	"strings"
)

// Variant describes one implementation of a function: its name ("avx2",
// "scalar") and the CPU features it needs. Lists of variants are ordered
// best first and end with the reference.
type Variant struct {
	Name  string
	Needs Features
}

// Status says whether one variant can run on a CPU, and why not.
type Status struct {
	Variant
	// Missing are the needed features, implied ones included, that the
	// CPU lacks.
	Missing Features
	// Off are the needed features that the CPU has but were turned off.
	Off Features
	// Disabled says why the variant was disabled (it disagreed with the
	// reference), or is "".
	Disabled string
	// Chosen is true for the variant that runs.
	Chosen bool
	// Reference is true for the last variant of the list.
	Reference bool
}

// Runnable reports whether the variant can run: nothing it needs is
// missing or turned off, and it is not disabled.
func (s Status) Runnable() bool { return s.Missing == 0 && s.Off == 0 && s.Disabled == "" }

// Why says in a few words why the variant runs or not: "chosen: best
// runnable", "needs avx512bw (this CPU lacks it)", "needs avx2 (turned off
// for this host: ...)", "disabled: ...", "runnable; a better variant
// runs".
func (s Status) Why() string {
	var why []string
	if s.Missing != 0 {
		why = append(why, fmt.Sprintf("needs %s (this CPU lacks %s)", s.Missing, them(s.Missing)))
	}
	if s.Off != 0 {
		why = append(why, fmt.Sprintf("needs %s (turned off for this host: %s or Options.CPUFeatures)", s.Off, EnvFeatures))
	}
	if s.Disabled != "" {
		why = append(why, "disabled: "+s.Disabled)
	}
	switch {
	case len(why) > 0:
		return strings.Join(why, "; ")
	case s.Chosen && s.Reference:
		return "chosen: the reference, the only runnable variant"
	case s.Chosen:
		return "chosen: the best runnable variant"
	}
	return "runnable; a better variant runs"
}

func them(s Features) string {
	if len(s.list()) == 1 {
		return "it"
	}
	return "them"
}

// Choice is the outcome of [Choose]: every variant's status, in the list's
// order, and which one runs.
type Choice struct {
	// Index is the chosen variant's index, or -1 if none can run.
	Index    int
	Variants []Status
}

// Chosen returns the status of the chosen variant; ok is false if none
// can run.
func (c Choice) Chosen() (s Status, ok bool) {
	if c.Index < 0 || c.Index >= len(c.Variants) {
		return Status{}, false
	}
	return c.Variants[c.Index], true
}

// ErrVariantList: a list of variants is malformed — empty, a name that is
// not valid or is used twice, a feature bit dispatch does not know. It is
// the author's mistake, not this machine's lack ([ErrNoVariant]).
var ErrVariantList = errors.New("malformed list of variants")

// Check verifies that vs is a usable list of variants: at least one, each
// with a valid, unique name (a letter, then letters, digits and '_') and
// only features dispatch knows. Errors wrap [ErrVariantList].
func Check(vs []Variant) error {
	if len(vs) == 0 {
		return fmt.Errorf("%w: it is empty", ErrVariantList)
	}
	for i, v := range vs {
		switch {
		case !validName(v.Name):
			return fmt.Errorf("%w: variant %d: name %q: want a letter, then letters, digits and '_'", ErrVariantList, i, v.Name)
		case indexOf(vs[:i], v.Name) >= 0:
			return fmt.Errorf("%w: variant name %q used twice", ErrVariantList, v.Name)
		case v.Needs.unknown() != 0:
			return fmt.Errorf("%w: variant %q needs unknown feature bits %#x", ErrVariantList, v.Name, uint64(v.Needs.unknown()))
		}
	}
	return nil
}

func indexOf(vs []Variant, name string) int {
	for i, v := range vs {
		if v.Name == name {
			return i
		}
	}
	return -1
}

func validName(n string) bool {
	for i, c := range []byte(n) {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return n != ""
}

// Choose picks the first variant of vs (best first, reference last) that
// cpu can run and that disabled (variant name → reason) does not name.
// Each variant's needs are closed under implication first ([Features.Closure]).
// It returns every variant's status either way; when none can run, the
// error wraps [ErrNoVariant] and says what each one lacks.
func Choose(vs []Variant, cpu CPU, disabled map[string]string) (Choice, error) {
	if err := Check(vs); err != nil {
		return Choice{Index: -1}, err
	}
	c := Choice{Index: -1, Variants: make([]Status, len(vs))}
	for i, v := range vs {
		need := v.Needs.Closure()
		s := Status{
			Variant:   v,
			Missing:   need &^ cpu.Has,
			Off:       need & cpu.Has & cpu.Off,
			Disabled:  disabled[v.Name],
			Reference: i == len(vs)-1,
		}
		if s.Reference {
			s.Disabled = "" // the reference is what the others are checked against
		}
		if c.Index < 0 && s.Runnable() {
			c.Index, s.Chosen = i, true
		}
		c.Variants[i] = s
	}
	if c.Index < 0 {
		why := make([]string, len(vs))
		for i, s := range c.Variants {
			why[i] = fmt.Sprintf("%q %s", s.Name, s.Why())
		}
		return c, fmt.Errorf("%w: %s", ErrNoVariant, strings.Join(why, "; "))
	}
	return c, nil
}
