package schema

import (
	"errors"
	"fmt"
)

// ErrPass: a pass failed or broke the rules of passes, such as a [Pass] that
// [Pass.Validate] refuses.
var ErrPass = errors.New("graph pass failed")

// PassKind says when a graph pass runs and what it may do.
type PassKind string

// The kinds of pass, in the order a build runs them.
const (
	// Populate passes attach definitions to nodes. One registered under
	// a node's name runs on that node; failing that, one registered under
	// the node's kind.
	Populate PassKind = "populate"
	// Partition passes group nodes into subgraph nodes through the
	// Builder, higher priority first.
	Partition PassKind = "partition"
	// Global passes see the whole graph last, higher priority first.
	Global PassKind = "global"
)

// Pass describes a graph pass. It is data, so a plugin's Info can declare
// its passes before the plugin starts.
type Pass struct {
	// Name names the pass, unique among passes, such as
	// "imgproc.simd-grayscale".
	Name string   `json:"name"`
	Kind PassKind `json:"kind"`
	// Match is, for a populate pass, the node name or node kind it
	// attaches definitions to.
	Match string `json:"match,omitempty"`
	// Priority orders partition and global passes: higher runs first,
	// ties by name. Populate passes registered under the same Match are
	// tried in the same order until one attaches a definition.
	Priority int `json:"priority,omitempty"`
	// Doc says in a sentence what the pass does.
	Doc string `json:"doc,omitempty"`
}

// validPassName reports whether name starts with a letter and has
// letters, digits and _ . + - only (ASCII): ^[A-Za-z][A-Za-z0-9_.+-]*$,
// without the regexp package, which a WebAssembly guest would link.
func validPassName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '.' || c == '+' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Validate checks the descriptor's fields. Errors wrap [ErrPass].
func (d Pass) Validate() error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("graph: pass %q: %w: "+format, append([]any{d.Name, ErrPass}, a...)...)
	}
	if !validPassName(d.Name) {
		return fail("a pass name starts with a letter and has letters, digits and _ . + - only")
	}
	switch d.Kind {
	case Populate:
		if d.Match == "" {
			return fail("a populate pass needs Match: the node name or kind it populates")
		}
	case Partition, Global:
		if d.Match != "" {
			return fail("Match is for populate passes, not %s passes", d.Kind)
		}
	default:
		return fail("kind %q is not one of populate, partition, global", d.Kind)
	}
	return nil
}
