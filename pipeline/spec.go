package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/dynop/dynop/schema"
)

// ErrInvalid is wrapped by every error that reports a problem with a
// pipeline file.
var ErrInvalid = errors.New("invalid pipeline")

// Pos is a position in a pipeline file.
type Pos struct {
	File      string // as given to Parse
	Line, Col int    // from 1
}

// String returns the position as "file:line:col".
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Error is one problem with a pipeline file.
type Error struct {
	Pos Pos // where the problem is
	// Field is the path of the field at fault, such as
	// "operators[2].args.width" or "outputs.thumbs.from"; empty for
	// problems with the file as a whole.
	Field string
	Msg   string // what the problem is
	// Err wraps ErrInvalid and, where it is the cause, an error of
	// package op or schema (such as errdefs.ErrNotFound or
	// schema.ErrArgument), of the file system or of the YAML parser.
	Err error
}

// Error returns "file:line:col: field: msg".
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Field, e.Msg)
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// onError says what a pipeline does when an input file cannot be
// processed.
type onError string

// The values of on_error.
const (
	onErrorStop onError = "stop" // stop the pipeline with the error
	onErrorSkip onError = "skip" // report the file and go on without it
)

// Spec is a parsed pipeline file: [Parse] or [Load] reads one, [Compile]
// builds it. The file is its public form; see the package
// documentation.
type Spec struct {
	file      string   // the path it was read from
	dir       string   // the directory relative paths resolve against
	version   int      // of the format: 1
	name      string   // optional
	batchSize int      // how many input files to process at once
	onError   onError  // what to do with an input file that fails
	inputs    []input  // in file order
	operators []node   // in file order
	outputs   []output // in file order
}

// Inputs returns the names of the spec's inputs, in file order: the
// names [Options.Inputs] takes.
func (s *Spec) Inputs() []string {
	names := make([]string, len(s.inputs))
	for i, in := range s.inputs {
		names[i] = in.name
	}
	return names
}

// Outputs returns the names of the spec's outputs, in file order: the
// order of a Step's (and a Stream step's) batches.
func (s *Spec) Outputs() []string {
	names := make([]string, len(s.outputs))
	for i, o := range s.outputs {
		names[i] = o.name
	}
	return names
}

// BatchSize returns how many samples the spec processes at once.
func (s *Spec) BatchSize() int { return s.batchSize }

// input is a named set of input files.
type input struct {
	name string // unique among inputs and operators
	// files are the paths, directories and globs as written, relative to
	// the spec's dir; [Spec.files] expands them.
	files []string
	// list is a file of paths, one per line, relative to its directory
	// ("-": standard input, relative to the working directory); empty if
	// not given.
	list    string
	listPos Pos
	// recursive takes the images of the directories in files from their
	// subdirectories too.
	recursive bool
	pos       Pos // of the name
}

// node is an operator of the pipeline.
type node struct {
	name     string        // unique among inputs and operators
	operator string        // the operator's name in the registry
	inputs   []ref         // one per input of the operator, in order
	args     schema.Args   // as ints (int64), floats, bools, strings, nil and []any of them
	device   schema.Device // schema.CPU unless given
	pos      Pos           // of the operator's entry
	// argPos is the position of each argument's key.
	argPos map[string]Pos

	// valuePos holds the positions of the values given: by field
	// ("op", "device"...) and, for an argument, by "args." and its name.
	valuePos map[string]Pos
}

// at returns the position of field's value, or of the node where the
// field is not given.
func (n *node) at(field string) Pos {
	if pos, ok := n.valuePos[field]; ok {
		return pos
	}
	return n.pos
}

// ref refers to an output of an operator, or to an input.
type ref struct {
	node string // an operator's or an input's name
	// output is the name of the operator's output: as written, and after
	// [Spec.Validate] always, from the operator's schema. It is empty for
	// inputs.
	output string
	pos    Pos // of the reference
}

// String returns the reference as written in a file: "node" or
// "node.output".
func (r ref) String() string {
	if r.output == "" {
		return r.node
	}
	return r.node + "." + r.output
}

// output is a named result of the pipeline, written as image files.
type output struct {
	name string // unique among outputs
	from ref    // what to write
	// dir is the directory to write into, relative to the spec's dir;
	// empty if not given.
	dir     string
	format  string // "png" (the default), "jpeg" or "npy"
	quality int    // jpeg quality from 1 to 100, or 0 for the encoder's default
	pos     Pos    // of the name
}

// errorList collects the problems found in a file.
type errorList []*Error

// add records a problem; cause, if not nil, is wrapped with ErrInvalid.
func (l *errorList) add(pos Pos, field string, cause error, msg string) {
	err := ErrInvalid
	if cause != nil {
		err = fmt.Errorf("%w: %w", ErrInvalid, cause)
	}
	*l = append(*l, &Error{Pos: pos, Field: field, Msg: msg, Err: err})
}

// addf records a problem with a formatted message.
func (l *errorList) addf(pos Pos, field, format string, args ...any) {
	l.add(pos, field, nil, fmt.Sprintf(format, args...))
}

// err returns the problems sorted by position and joined, or nil.
func (l errorList) err() error {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errors.Join(errs...)
}
