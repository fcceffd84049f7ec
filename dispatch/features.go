// Package dispatch chooses, among the implementations of a function that
// need different CPU features, the best one this CPU can run: numpy's and
// liboil's CPU-specific code paths, for plugins.
//
// A [Variant] is an implementation tagged with the [Features] it needs. A
// list of variants is ordered best first and ends with the reference, the
// portable implementation the others must agree with. [Choose] takes the
// first variant whose features are available, once; callers bind it into
// a function table, so a call costs one indirect call and no decision.
//
// Available features are those the CPU has ([Detect], from
// golang.org/x/sys/cpu) less those turned off. DYNOP_CPU_FEATURES turns
// features off for testing, after numpy's NPY_DISABLE_CPU_FEATURES:
//
//	DYNOP_CPU_FEATURES=-avx512f,-avx2
//
// turns off AVX-512 and AVX2, and with them every feature that builds on
// them, so the variants that need them are not chosen. A name dispatch
// does not know is an error, never silently ignored. [CPU.TurnOff] does
// the same for a program.
//
// The feature bits are those of dynop.h's DYNOP_CPU_* macros: a C
// plugin's feature mask and a [Features] value are the same number.
package dispatch

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/machine"
)

// Sentinel errors; test for them with [errors.Is].
var (
	// ErrUnknownFeature: a feature name dispatch does not know.
	ErrUnknownFeature = errors.New("unknown CPU feature")
	// ErrNoVariant: no variant of a function can run here (a malformed
	// list is [ErrVariantList]).
	ErrNoVariant = errors.New("no runnable variant")
)

// Feature is one CPU feature: a bit number of a [Features] set, the same
// as the bit of its DYNOP_CPU_* macro in dynop.h.
type Feature uint8

// The features dispatch knows. Their names are golang.org/x/sys/cpu's
// flag names in lower case, as [Feature.String] returns them.
const (
	SSE2 Feature = iota
	SSE3
	SSSE3
	SSE41
	SSE42
	POPCNT
	AVX
	AVX2
	FMA
	F16C
	BMI1
	BMI2
	LZCNT
	MOVBE
	AVX512F
	AVX512BW
	AVX512VL
	AVX512DQ
	AVX512CD
	AVX512VNNI
	AVX512BF16
	AVX512IFMA
	AVX512VBMI
	AVX512VBMI2
	AVX512BITALG
	AVX512VPOPCNTDQ
	AVXVNNI
)

// arm64 features start at bit 32.
const (
	ASIMD Feature = 32 + iota
	ASIMDDP
	ASIMDHP
	ASIMDFHM
	ASIMDRDM
	I8MM
	SVE
	SVE2
	FPHP
)

// NEON is ASIMD, by the name Arm's compilers use.
const NEON = ASIMD

type featureInfo struct {
	name    string
	implies []Feature // the features it is built on, directly
}

var features = map[Feature]featureInfo{
	SSE2:            {"sse2", nil},
	SSE3:            {"sse3", []Feature{SSE2}},
	SSSE3:           {"ssse3", []Feature{SSE3}},
	SSE41:           {"sse41", []Feature{SSSE3}},
	SSE42:           {"sse42", []Feature{SSE41}},
	POPCNT:          {"popcnt", nil},
	AVX:             {"avx", []Feature{SSE42}},
	AVX2:            {"avx2", []Feature{AVX}},
	FMA:             {"fma", []Feature{AVX}},
	F16C:            {"f16c", []Feature{AVX}},
	BMI1:            {"bmi1", nil},
	BMI2:            {"bmi2", nil},
	LZCNT:           {"lzcnt", nil},
	MOVBE:           {"movbe", nil},
	AVX512F:         {"avx512f", []Feature{AVX2, FMA, F16C}},
	AVX512BW:        {"avx512bw", []Feature{AVX512F}},
	AVX512VL:        {"avx512vl", []Feature{AVX512F}},
	AVX512DQ:        {"avx512dq", []Feature{AVX512F}},
	AVX512CD:        {"avx512cd", []Feature{AVX512F}},
	AVX512VNNI:      {"avx512vnni", []Feature{AVX512F}},
	AVX512BF16:      {"avx512bf16", []Feature{AVX512BW}},
	AVX512IFMA:      {"avx512ifma", []Feature{AVX512F}},
	AVX512VBMI:      {"avx512vbmi", []Feature{AVX512BW}},
	AVX512VBMI2:     {"avx512vbmi2", []Feature{AVX512BW}},
	AVX512BITALG:    {"avx512bitalg", []Feature{AVX512BW}},
	AVX512VPOPCNTDQ: {"avx512vpopcntdq", []Feature{AVX512F}},
	AVXVNNI:         {"avxvnni", []Feature{AVX2}},
	ASIMD:           {"asimd", nil},
	ASIMDDP:         {"asimddp", []Feature{ASIMD}},
	ASIMDHP:         {"asimdhp", []Feature{ASIMD, FPHP}},
	ASIMDFHM:        {"asimdfhm", []Feature{ASIMDHP}},
	ASIMDRDM:        {"asimdrdm", []Feature{ASIMD}},
	I8MM:            {"i8mm", []Feature{ASIMD}},
	SVE:             {"sve", []Feature{ASIMD}},
	SVE2:            {"sve2", []Feature{SVE}},
	FPHP:            {"fphp", nil},
}

// aliases are other names for features, accepted wherever names are.
var aliases = map[string]Feature{"neon": ASIMD}

var byName = sync.OnceValue(func() map[string]Feature {
	m := make(map[string]Feature, len(features)+len(aliases))
	for f, info := range features {
		m[info.name] = f
	}
	for name, f := range aliases {
		m[name] = f
	}
	return m
})

// closures[f] is f with everything it implies, directly or not.
var closures = sync.OnceValue(func() map[Feature]Features {
	m := make(map[Feature]Features, len(features))
	var closure func(f Feature) Features
	closure = func(f Feature) Features {
		if c, ok := m[f]; ok {
			return c
		}
		c := f.Set()
		for _, g := range features[f].implies {
			c |= closure(g)
		}
		m[f] = c
		return c
	}
	for f := range features {
		closure(f)
	}
	return m
})

// String returns the feature's name, such as "avx512bw", or "bit N" for a
// bit dispatch does not know.
func (f Feature) String() string {
	if info, ok := features[f]; ok {
		return info.name
	}
	return fmt.Sprintf("bit %d", uint8(f))
}

// Set returns the set holding f alone.
func (f Feature) Set() Features {
	if f >= 64 {
		return 0
	}
	return 1 << f
}

// Lookup returns the feature called name (lower case, as x/sys/cpu names
// it; "neon" is ASIMD) and whether there is one.
func Lookup(name string) (Feature, bool) {
	f, ok := byName()[name]
	return f, ok
}

// Known returns the names of every feature dispatch knows, sorted.
func Known() []string {
	names := make([]string, 0, len(features))
	for _, info := range features {
		names = append(names, info.name)
	}
	slices.Sort(names)
	return names
}

// KnownFor returns the names of the features dispatch knows for arch, a
// GOARCH value ("amd64", "arm64"), sorted; nil for an architecture without
// any.
func KnownFor(arch string) []string {
	var lo, hi Feature
	switch arch {
	case "386", "amd64":
		lo, hi = 0, 32
	case "arm64":
		lo, hi = 32, 64
	default:
		return nil
	}
	var names []string
	for f, info := range features {
		if f >= lo && f < hi {
			names = append(names, info.name)
		}
	}
	slices.Sort(names)
	return names
}

// Features is a set of CPU features, bit f for [Feature] f: the same bits
// as a C plugin's dynop_cpu_features mask.
type Features uint64

// Of returns the set of fs.
func Of(fs ...Feature) Features {
	var s Features
	for _, f := range fs {
		s |= f.Set()
	}
	return s
}

// Has reports whether s holds f.
func (s Features) Has(f Feature) bool { return s&f.Set() != 0 }

// Contains reports whether s holds every feature of t.
func (s Features) Contains(t Features) bool { return t&^s == 0 }

// Closure returns s with every feature its features imply: avx512bw
// brings avx512f, avx2, avx, fma, f16c and the SSE levels. Bits dispatch
// does not know stay as they are.
func (s Features) Closure() Features {
	c := s
	for f := range s.each() {
		c |= closures()[f]
	}
	return c
}

// dependents returns every known feature that implies one in s, and s.
func (s Features) dependents() Features {
	d := s
	for f, c := range closures() {
		if c&s != 0 {
			d |= f.Set()
		}
	}
	return d
}

// unknown returns the bits of s that name no feature dispatch knows.
func (s Features) unknown() Features {
	var u Features
	for f := range s.each() {
		if _, ok := features[f]; !ok {
			u |= f.Set()
		}
	}
	return u
}

// each yields the features in s, lowest bit first.
func (s Features) each() func(yield func(Feature) bool) {
	return func(yield func(Feature) bool) {
		for rest := uint64(s); rest != 0; rest &= rest - 1 {
			if !yield(Feature(bits.TrailingZeros64(rest))) {
				return
			}
		}
	}
}

// list returns the features of s, lowest bit first.
func (s Features) list() []Feature {
	var out []Feature
	for f := range s.each() {
		out = append(out, f)
	}
	return out
}

// Names returns the names of s's features, sorted.
func (s Features) Names() []string {
	var names []string
	for f := range s.each() {
		names = append(names, f.String())
	}
	slices.Sort(names)
	return names
}

// String returns the sorted names separated by commas ("avx2,fma"), or
// "none" for the empty set.
func (s Features) String() string {
	if s == 0 {
		return "none"
	}
	return strings.Join(s.Names(), ",")
}

// Parse reads a comma-separated list of feature names ("avx2,fma"; spaces
// around names are allowed, "" is the empty set). An unknown name is an
// error wrapping [ErrUnknownFeature] that suggests the nearest known one.
func Parse(list string) (Features, error) {
	var s Features
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		f, err := lookup(name)
		if err != nil {
			return 0, err
		}
		s |= f.Set()
	}
	return s, nil
}

func lookup(name string) (Feature, error) {
	if f, ok := Lookup(strings.ToLower(name)); ok {
		return f, nil
	}
	known := KnownFor(runtime.GOARCH)
	if len(known) == 0 {
		known = Known()
	}
	hint := ""
	if near := suggest.Nearest(strings.ToLower(name), known); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return 0, fmt.Errorf("%w %q%s; known on %s: %s", ErrUnknownFeature, name, hint, runtime.GOARCH, strings.Join(known, ", "))
}

// FromNames returns the set of the named features, skipping names dispatch
// does not know, as machine.Machine.CPUFeatures lists them.
func FromNames(names []string) Features {
	var s Features
	for _, n := range names {
		if f, ok := Lookup(n); ok {
			s |= f.Set()
		}
	}
	return s
}

// Detect returns the features of this CPU that dispatch knows, as
// golang.org/x/sys/cpu reports them (which includes the operating
// system's support for the wider registers).
func Detect() Features { return detected() }

var detected = sync.OnceValue(func() Features { return FromNames(machine.DetectCPUFeatures()) })
