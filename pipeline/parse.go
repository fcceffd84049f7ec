package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/schema"
)

const (
	defaultBatchSize = 8
	maxBatchSize     = 4096
)

// The fields each mapping of a file may have.
var (
	specFields   = []string{"version", "name", "batch_size", "on_error", "inputs", "operators", "outputs"}
	inputFields  = []string{"files", "list", "recursive"}
	nodeFields   = []string{"name", "op", "inputs", "args", "device"}
	outputFields = []string{"from", "dir", "format", "quality"}
)

// namePattern is what the names of inputs, operators and outputs look like.
var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// Load reads and parses the pipeline file at path; see [Parse].
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses data, the contents of the pipeline file file, and checks
// its structure: YAML syntax, known fields, the kinds and ranges of
// values, required fields, and names (well formed and unique). It fills
// in defaults. Every problem is reported, as [*Error]s sorted by position
// and joined with [errors.Join].
func Parse(file string, data []byte) (*Spec, error) {
	p := &parser{file: file}
	root := p.document(data)
	if root == nil {
		return nil, p.errs.err()
	}
	s := p.spec(root)
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// parser reads one file, collecting its problems.
type parser struct {
	file string
	errs errorList
}

func (p *parser) pos(n *yaml.Node) Pos { return Pos{File: p.file, Line: n.Line, Col: n.Column} }

// errorf reports a problem with field at node n.
func (p *parser) errorf(n *yaml.Node, field, format string, args ...any) {
	p.errs.addf(p.pos(n), field, format, args...)
}

// document returns the top-level node of data's YAML document, or nil if
// there is none.
func (p *parser) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.errs.addf(Pos{File: p.file, Line: 1, Col: 1}, "", "the file is empty")
		} else {
			p.syntax(err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.syntax(err)
	default:
		p.errorf(&next, "", "a second YAML document; a pipeline file holds one")
	}
	return doc.Content[0]
}

// syntax reports a YAML syntax error, at the line the parser gives if it
// gives one.
func (p *parser) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, text, _ := strings.Cut(rest, ": ")
		if n, err := strconv.Atoi(num); err == nil {
			line, msg = n, text
		}
	}
	p.errs.add(Pos{File: p.file, Line: line, Col: 1}, "", err, "YAML syntax error: "+msg)
}

// spec reads the top-level mapping.
func (p *parser) spec(root *yaml.Node) *Spec {
	s := &Spec{file: p.file, dir: filepath.Dir(p.file), version: 1, batchSize: defaultBatchSize, onError: onErrorStop}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "", "the top level must be a mapping (inputs, operators, outputs...), not %s", describe(root))
		return s
	}
	f := p.fields(root, "", specFields, "inputs", "operators", "outputs")
	if n := f["version"]; n != nil {
		if v, ok := p.integer(n, "version"); ok && v != 1 {
			p.errorf(n, "version", "unknown version %d; the only version is 1", v)
		}
	}
	if n := f["name"]; n != nil {
		s.name, _ = p.str(n, "name")
	}
	if n := f["batch_size"]; n != nil {
		s.batchSize = p.intRange(n, "batch_size", 1, maxBatchSize)
	}
	if n := f["on_error"]; n != nil {
		s.onError = onError(p.oneOf(n, "on_error", string(onErrorStop), string(onErrorSkip)))
	}
	if n := f["inputs"]; n != nil {
		s.inputs = p.inputs(n)
	}
	if n := f["operators"]; n != nil {
		s.operators = p.operators(n)
	}
	if n := f["outputs"]; n != nil {
		s.outputs = p.outputs(n)
	}
	p.unique(s)
	return s
}

// inputs reads the inputs mapping.
func (p *parser) inputs(n *yaml.Node) []input {
	pairs, ok := p.entries(n, "inputs")
	if ok && len(pairs) == 0 {
		p.errorf(n, "inputs", "want at least one input")
	}
	var ins []input
	for _, e := range pairs {
		path := "inputs." + e.key.Value
		in := input{pos: p.pos(e.key)}
		in.name = p.name(e.key, path)
		f := p.fields(e.val, path, inputFields)
		if v := f["files"]; v != nil {
			in.files = p.files(v, path+".files")
		}
		if v := f["list"]; v != nil {
			in.list, _ = p.str(v, path+".list")
			in.listPos = p.pos(v)
		}
		if v := f["recursive"]; v != nil {
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&in.recursive) != nil {
				p.errorf(v, path+".recursive", "want true or false, got %s", describe(v))
			}
		}
		if f != nil && f["files"] == nil && f["list"] == nil {
			p.errorf(e.val, path, "want files (paths, directories, globs) or list (a file of paths, or - for standard input), or both")
		}
		ins = append(ins, in)
	}
	return ins
}

// files returns an input's patterns: a list of strings, or one string.
func (p *parser) files(n *yaml.Node, field string) []string {
	list := p.list(n, field)
	if n.Kind == yaml.SequenceNode && len(list) == 0 {
		p.errorf(n, field, "want at least one file, directory or glob")
	}
	var files []string
	for i, c := range list {
		if s, ok := p.str(c, fmt.Sprintf("%s[%d]", field, i)); ok {
			files = append(files, s)
		}
	}
	return files
}

// operators reads the operators list.
func (p *parser) operators(n *yaml.Node) []node {
	if !p.is(n, yaml.SequenceNode, "operators") {
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n, "operators", "want at least one operator")
	}
	nodes := make([]node, len(n.Content))
	for i, c := range n.Content {
		nodes[i] = p.node(c, fmt.Sprintf("operators[%d]", i))
	}
	return nodes
}

// node reads one operator's mapping.
func (p *parser) node(n *yaml.Node, path string) node {
	nd := node{device: schema.CPU, pos: p.pos(n), valuePos: map[string]Pos{}}
	f := p.fields(n, path, nodeFields, "name", "op")
	for k, v := range f {
		nd.valuePos[k] = p.pos(v)
	}
	if v := f["name"]; v != nil {
		nd.name = p.name(v, path+".name")
	}
	if v := f["op"]; v != nil {
		nd.operator, _ = p.str(v, path+".op")
	}
	if v := f["inputs"]; v != nil {
		nd.inputs = p.refs(v, path+".inputs")
	}
	if v := f["args"]; v != nil {
		p.args(v, path+".args", &nd)
	}
	if v := f["device"]; v != nil {
		d, _ := p.str(v, path+".device")
		nd.device = schema.Device(d)
	}
	return nd
}

// refs returns an operator's inputs: a list of references, or one.
func (p *parser) refs(n *yaml.Node, field string) []ref {
	var refs []ref
	for i, c := range p.list(n, field) {
		if r, ok := p.ref(c, fmt.Sprintf("%s[%d]", field, i)); ok {
			refs = append(refs, r)
		}
	}
	return refs
}

// ref reads a reference: "node" or "node.output".
func (p *parser) ref(n *yaml.Node, field string) (ref, bool) {
	s, ok := p.str(n, field)
	if !ok {
		return ref{}, false
	}
	node, out, dotted := strings.Cut(s, ".")
	if !namePattern.MatchString(node) || dotted && out == "" {
		p.errorf(n, field, `invalid reference %q: want "node" or "node.output"`, s)
		return ref{}, false
	}
	return ref{node: node, output: out, pos: p.pos(n)}, true
}

// args fills in nd's arguments and their positions.
func (p *parser) args(n *yaml.Node, field string, nd *node) {
	pairs, ok := p.entries(n, field)
	if !ok {
		return
	}
	nd.args = make(schema.Args, len(pairs))
	nd.argPos = make(map[string]Pos, len(pairs))
	for _, e := range pairs {
		name := e.key.Value
		nd.argPos[name] = p.pos(e.key)
		nd.valuePos["args."+name] = p.pos(e.val)
		if v, ok := p.value(e.val, field+"."+name); ok {
			nd.args[name] = v
		}
	}
}

// value returns an argument's value as the Go types op.Check takes: a
// scalar, or a list of scalars as []any.
func (p *parser) value(n *yaml.Node, field string) (any, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		return p.scalar(n, field)
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, good := p.scalar(c, fmt.Sprintf("%s[%d]", field, i))
			list[i], ok = v, ok && good
		}
		return list, ok
	}
	p.errorf(n, field, "want a value or a list of values, got %s", describe(n))
	return nil, false
}

// scalar returns a YAML scalar as an int64, float64, bool, string or nil.
func (p *parser) scalar(n *yaml.Node, field string) (any, bool) {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, field, "want a number, string or boolean, got %s", describe(n))
		return nil, false
	}
	switch tag := n.ShortTag(); tag {
	case "!!int", "!!float", "!!bool", "!!null":
		var v any
		if err := n.Decode(&v); err != nil {
			p.errorf(n, field, "invalid %s %q", strings.TrimPrefix(tag, "!!"), n.Value)
			return nil, false
		}
		if i, ok := v.(int); ok {
			return int64(i), true
		}
		return v, true
	}
	return n.Value, true // strings; timestamps and other tags as written
}

// outputs reads the outputs mapping.
func (p *parser) outputs(n *yaml.Node) []output {
	pairs, ok := p.entries(n, "outputs")
	if ok && len(pairs) == 0 {
		p.errorf(n, "outputs", "want at least one output")
	}
	var outs []output
	for _, e := range pairs {
		path := "outputs." + e.key.Value
		o := output{format: "png", pos: p.pos(e.key)}
		o.name = p.name(e.key, path)
		f := p.fields(e.val, path, outputFields, "from")
		if v := f["from"]; v != nil {
			o.from, _ = p.ref(v, path+".from")
		}
		if v := f["dir"]; v != nil {
			o.dir, _ = p.str(v, path+".dir")
		}
		if v := f["format"]; v != nil {
			o.format = p.oneOf(v, path+".format", "png", "jpeg", "npy")
		}
		if v := f["quality"]; v != nil {
			o.quality = p.intRange(v, path+".quality", 1, 100)
			if o.format != "jpeg" {
				p.errorf(v, path+".quality", "quality is for jpeg only; the format is %s", o.format)
			}
		}
		outs = append(outs, o)
	}
	return outs
}

// unique reports operator names used twice, or used by an input.
func (p *parser) unique(s *Spec) {
	inputs := make(map[string]Pos, len(s.inputs))
	for _, in := range s.inputs {
		inputs[in.name] = in.pos
	}
	nodes := make(map[string]Pos, len(s.operators))
	for i, n := range s.operators {
		if n.name == "" { // missing or invalid: reported
			continue
		}
		pos, field := n.at("name"), fmt.Sprintf("operators[%d].name", i)
		if at, ok := inputs[n.name]; ok {
			p.errs.addf(pos, field, "name %q is taken by the input at %s", n.name, at)
		} else if at, ok := nodes[n.name]; ok {
			p.errs.addf(pos, field, "duplicate name %q (first used at %s)", n.name, at)
		} else {
			nodes[n.name] = pos
		}
	}
}

// pair is a key and its value in a mapping.
type pair struct{ key, val *yaml.Node }

// entries returns the pairs of mapping n in order, reporting keys that
// are not names or that are given twice, and whether n is a mapping.
func (p *parser) entries(n *yaml.Node, path string) ([]pair, bool) {
	if !p.is(n, yaml.MappingNode, path) {
		return nil, false
	}
	var pairs []pair
	first := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			p.errorf(k, path, "want a name as key, got %s", describe(k))
		case first[k.Value] != nil:
			p.errorf(k, join(path, k.Value), "duplicate key %q (first at %s)", k.Value, p.pos(first[k.Value]))
		default:
			first[k.Value] = k
			pairs = append(pairs, pair{k, v})
		}
	}
	return pairs, true
}

// fields returns the values of mapping n by key, reporting keys not in
// known and missing required ones. It returns nil if n is no mapping.
func (p *parser) fields(n *yaml.Node, path string, known []string, required ...string) map[string]*yaml.Node {
	pairs, ok := p.entries(n, path)
	if !ok {
		return nil
	}
	f := make(map[string]*yaml.Node, len(pairs))
	for _, e := range pairs {
		k := e.key.Value
		if !slices.Contains(known, k) {
			hint := didYouMean(k, known)
			if hint == "" {
				hint = " (known: " + strings.Join(known, ", ") + ")"
			}
			p.errorf(e.key, join(path, k), "unknown field %q%s", k, hint)
			continue
		}
		f[k] = e.val
	}
	for _, k := range required {
		if f[k] == nil {
			p.errorf(n, join(path, k), "required field is missing")
		}
	}
	return f
}

// is reports whether n is of kind k, reporting a problem with field if not.
func (p *parser) is(n *yaml.Node, k yaml.Kind, field string) bool {
	if n.Kind == k {
		return true
	}
	want := "a list"
	if k == yaml.MappingNode {
		want = "a mapping"
	}
	p.errorf(n, field, "want %s, got %s", want, describe(n))
	return false
}

// list returns the elements of sequence n, or n itself if it is a scalar.
func (p *parser) list(n *yaml.Node, field string) []*yaml.Node {
	if n.Kind == yaml.ScalarNode {
		return []*yaml.Node{n}
	}
	if !p.is(n, yaml.SequenceNode, field) {
		return nil
	}
	return n.Content
}

// str returns the text of scalar n, which must not be empty or null.
func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.Value == "" {
		p.errorf(n, field, "want a non-empty string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// name returns the text of n, which must be a valid name, or "".
func (p *parser) name(n *yaml.Node, field string) string {
	s, ok := p.str(n, field)
	if ok && !namePattern.MatchString(s) {
		p.errorf(n, field, "invalid name %q: want a letter or '_', then letters, digits, '_' or '-'", s)
		return ""
	}
	return s
}

// oneOf returns the text of n, which must be one of allowed, or "".
func (p *parser) oneOf(n *yaml.Node, field string, allowed ...string) string {
	s, ok := p.str(n, field)
	if ok && !slices.Contains(allowed, s) {
		p.errorf(n, field, "want %s, got %q%s", strings.Join(allowed, " or "), s, didYouMean(s, allowed))
		return ""
	}
	return s
}

// integer returns n as an integer.
func (p *parser) integer(n *yaml.Node, field string) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.errorf(n, field, "want an integer, got %s", describe(n))
		return 0, false
	}
	return v, true
}

// intRange returns n as an integer from lo to hi, or 0.
func (p *parser) intRange(n *yaml.Node, field string, lo, hi int) int {
	v, ok := p.integer(n, field)
	if ok && (v < lo || v > hi) {
		p.errorf(n, field, "want %d to %d, got %d", lo, hi, v)
		return 0
	}
	return v
}

// describe says what n is, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return fmt.Sprintf("the alias *%s (aliases are not supported)", n.Value)
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing (null)"
	case "!!str":
		return strconv.Quote(n.Value)
	}
	return n.Value
}

// didYouMean returns ` (did you mean "x"?)` for the name x in known that
// name may be a typo of, or "".
func didYouMean(name string, known []string) string {
	if near := suggest.Nearest(name, known); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// join returns the path of field key within path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
