package dispatch

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Environment variables read by [FromEnv] and [VerifyFromEnv].
const (
	// EnvFeatures turns CPU features off: "-avx512f,-avx2".
	EnvFeatures = "DYNOP_CPU_FEATURES"
	// EnvVerify, set to 1 (or any true value of strconv.ParseBool), asks
	// hosts to check every runnable variant against the reference at
	// first use and to disable those that disagree.
	EnvVerify = "DYNOP_VERIFY_VARIANTS"
)

// CPU is what variants may use: the features a CPU has, and those turned
// off for testing. The zero CPU has no features: only variants that need
// none run on it.
type CPU struct {
	// Has is what the CPU has.
	Has Features
	// Off is what was turned off: the features named, and every feature
	// that implies one of them.
	Off Features
}

// Host returns this CPU with nothing turned off.
func Host() CPU { return CPU{Has: Detect()} }

// Available returns the features variants may use: Has less Off.
func (c CPU) Available() Features { return c.Has &^ c.Off }

// TurnOff returns c with more features turned off. spec is a
// comma-separated list of "-name" entries, the form of DYNOP_CPU_FEATURES
// ("-avx512f,-avx2"); turning a feature off turns off every feature that
// implies it (avx2 takes the avx512 family with it). Features cannot be
// turned on: an entry without "-", or a name dispatch does not know, is an
// error (wrapping [ErrUnknownFeature] for the latter). Turning off a
// feature the CPU lacks is allowed and changes nothing.
func (c CPU) TurnOff(spec string) (CPU, error) {
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, ok := strings.CutPrefix(entry, "-")
		if !ok {
			return c, fmt.Errorf("%q: want -NAME to turn a feature off (features cannot be turned on)", entry)
		}
		f, err := lookup(strings.TrimSpace(name))
		if err != nil {
			return c, err
		}
		c.Off |= f.Set().dependents()
	}
	return c, nil
}

// builtOn maps the names of features that machine reports but dispatch
// has no bit for to the features they build on, so that turning those off
// turns these off too: without it a plugin that requires "avx512" would
// still run with avx512f turned off.
var builtOn = map[string]Features{
	"avx512":           Of(AVX512F, AVX512CD, AVX512BW, AVX512DQ, AVX512VL),
	"avx512er":         AVX512F.Set(),
	"avx512pf":         AVX512F.Set(),
	"avx5124fmaps":     AVX512F.Set(),
	"avx5124vnniw":     AVX512F.Set(),
	"avx512vaes":       AVX512F.Set(),
	"avx512gfni":       AVX512F.Set(),
	"avx512vpclmulqdq": AVX512F.Set(),
	"avxifma":          AVX2.Set(),
	"avxvnniint8":      AVX2.Set(),
	"aes":              SSE2.Set(),
	"pclmulqdq":        SSE2.Set(),
}

// TurnsOff reports whether c turns off the feature called name, a name as
// machine.Machine.CPUFeatures lists it: one of dispatch's features that is
// off, or a feature dispatch has no bit for that builds on one that is.
func (c CPU) TurnsOff(name string) bool {
	if f, ok := Lookup(name); ok {
		return c.Off.Has(f)
	}
	if on, ok := builtOn[name]; ok {
		return on.Closure()&c.Off != 0
	}
	return false
}

// String describes c: its available features, and those turned off.
func (c CPU) String() string {
	s := c.Available().String()
	if off := c.Off & c.Has; off != 0 {
		s += fmt.Sprintf(" (turned off: %s)", off)
	}
	return s
}

// FromEnv returns this CPU with the features $DYNOP_CPU_FEATURES names
// turned off. A malformed value is an error that names the variable.
func FromEnv() (CPU, error) {
	c, err := Host().TurnOff(os.Getenv(EnvFeatures))
	if err != nil {
		return c, fmt.Errorf("%s: %w", EnvFeatures, err)
	}
	return c, nil
}

// VerifyFromEnv reports whether $DYNOP_VERIFY_VARIANTS asks for variants
// to be verified. Unset or empty is false; a value strconv.ParseBool does
// not accept is an error that names the variable.
func VerifyFromEnv() (bool, error) {
	v := os.Getenv(EnvVerify)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 or 0", EnvVerify, v)
	}
	return b, nil
}
