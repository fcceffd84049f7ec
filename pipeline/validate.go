package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Validate checks s against the operators of reg: that each operator
// exists, has a backend for its device on this machine and valid
// arguments, that each node has as many inputs as its operator takes,
// that every reference names an input, or an operator and one of its
// outputs, and that the operators form no cycle. It fills in the output
// name of every reference to an operator. It runs no operator or plugin
// code: it only reads schemas, through [op.Registry.Lookup] and
// [op.Registry.Check]. Every problem is reported, as [*Error]s sorted by
// position and joined with [errors.Join].
func (s *Spec) Validate(reg *op.Registry) error {
	v := &validator{spec: s, reg: reg, inputs: map[string]bool{}, schemas: map[string]*schema.Op{}}
	for _, in := range s.inputs {
		v.inputs[in.name] = true
	}
	for i := range s.operators {
		v.operator(i)
	}
	for i := range s.operators {
		v.nodeInputs(i)
	}
	for i := range s.outputs {
		o := &s.outputs[i]
		v.resolve(&o.from, "outputs."+o.name+".from")
	}
	v.cycles()
	return v.errs.err()
}

// validator checks one spec.
type validator struct {
	spec   *Spec
	reg    *op.Registry
	inputs map[string]bool
	// schemas holds each operator's schema by node name: nil where the
	// operator is unknown.
	schemas map[string]*schema.Op
	errs    errorList
}

// operator looks up the schema of operator i and checks its device and
// arguments.
func (v *validator) operator(i int) {
	n := &v.spec.operators[i]
	path := fmt.Sprintf("operators[%d]", i)
	e, err := v.reg.Lookup(n.operator)
	if err != nil {
		v.schemas[n.name] = nil
		v.errs.add(n.at("op"), path+".op", err, opMessage(err))
		return
	}
	v.schemas[n.name] = &e.Schema
	_, err = v.reg.Check(n.operator, n.args, op.OnDevice(n.device))
	if err == nil {
		return
	}
	found := v.args(n, &e.Schema, path+".args")
	switch {
	case errors.Is(err, errdefs.ErrUnsupported):
		v.errs.add(n.at("device"), path+".device", err, opMessage(err))
	case !found: // about no one argument: reported whole, at the operator
		for _, e := range split(err) {
			v.errs.add(n.pos, path, e, opMessage(e))
		}
	}
}

// split returns the errors that err joins, or err alone, or none if err
// is nil.
func split(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}

// discard drops the warnings about deprecated argument names that args
// would repeat: Registry.Check has logged them.
var discard = slog.New(slog.DiscardHandler)

// args reports the problems with n's arguments, each at the argument it
// concerns, and whether there were any.
//
// Registry.Check reports all problems at once, naming the argument only
// in its messages. Rather than parse them, args checks each argument of
// the schema alone, against a copy of the schema with that argument only
// (required only if it is not given), and each unknown name against a
// copy in which no argument is required: the messages stay op's own, and
// each concerns the argument checked. Only schemas are read, as by
// Registry.Check.
func (v *validator) args(n *node, s *schema.Op, path string) bool {
	given := map[string][]string{} // the names each argument is given by
	var unknown []string
	for _, name := range slices.SortedFunc(maps.Keys(n.args), byPos(n.argPos)) {
		if a, ok := s.Arg(name); ok {
			given[a.Name] = append(given[a.Name], name)
		} else {
			unknown = append(unknown, name)
		}
	}
	found := false
	check := func(args []schema.Arg, names []string, pos Pos, field string) {
		one := *s
		one.Args = args
		picked := make(schema.Args, len(names))
		for _, name := range names {
			picked[name] = n.args[name]
		}
		_, err := one.Check(picked, discard)
		for _, e := range split(err) {
			v.errs.add(pos, field, e, e.Error())
			found = true
		}
	}
	optional := slices.Clone(s.Args)
	for i := range optional {
		optional[i].Required = false
	}
	for i, a := range s.Args {
		names := given[a.Name]
		if len(names) == 0 { // a required argument missing, if anything
			check(s.Args[i:i+1], nil, n.pos, path+"."+a.Name)
			continue
		}
		last := names[len(names)-1]
		check(optional[i:i+1], names, n.at("args."+last), path+"."+last)
	}
	for _, name := range unknown {
		check(optional, []string{name}, n.argPos[name], path+"."+name)
	}
	return found
}

// byPos orders argument names by the position of their keys.
func byPos(pos map[string]Pos) func(a, b string) int {
	return func(a, b string) int {
		pa, pb := pos[a], pos[b]
		return cmp.Or(cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Col, pb.Col), strings.Compare(a, b))
	}
}

// opMessage returns the message of an error from package op, without
// the package's prefix, which the position replaces.
func opMessage(err error) string { return strings.TrimPrefix(err.Error(), "op: ") }

// nodeInputs checks the number of operator i's inputs and resolves them.
func (v *validator) nodeInputs(i int) {
	n := &v.spec.operators[i]
	path := fmt.Sprintf("operators[%d].inputs", i)
	if s := v.schemas[n.name]; s != nil && (len(n.inputs) < s.MinInputs() || len(n.inputs) > len(s.Inputs)) {
		v.errs.addf(n.at("inputs"), path, "%s %s, got %d", s.Name, takes(s), len(n.inputs))
	}
	for j := range n.inputs {
		v.resolve(&n.inputs[j], fmt.Sprintf("%s[%d]", path, j))
	}
}

// takes says how many inputs an operator takes.
func takes(s *schema.Op) string {
	names := make([]string, len(s.Inputs))
	for i, in := range s.Inputs {
		names[i] = in.Name
	}
	switch lo, hi := s.MinInputs(), len(s.Inputs); {
	case hi == 0:
		return "takes no inputs"
	case lo == hi:
		return fmt.Sprintf("takes %s (%s)", english.Plural(hi, "input"), strings.Join(names, ", "))
	default:
		return fmt.Sprintf("takes %d to %d inputs (%s; %s optional)", lo, hi, strings.Join(names, ", "), strings.Join(names[lo:], ", "))
	}
}

// resolve checks that r refers to an input or to an output of an
// operator, and fills in the output's name.
func (v *validator) resolve(r *ref, field string) {
	if v.inputs[r.node] {
		if r.output != "" {
			v.errs.addf(r.pos, field, "input %q has no output %q; refer to it as %q", r.node, r.output, r.node)
		}
		return
	}
	s, ok := v.schemas[r.node]
	switch {
	case !ok:
		names := slices.Concat(slices.Collect(maps.Keys(v.inputs)), slices.Collect(maps.Keys(v.schemas)))
		slices.Sort(names) // the same suggestion every time
		v.errs.addf(r.pos, field, "no operator or input is called %q%s", r.node, didYouMean(r.node, names))
	case s != nil: // nil: an unknown operator, reported
		v.output(r, s, field)
	}
}

// output checks that r names an output of s, filling it in if r names
// none and s has one.
func (v *validator) output(r *ref, s *schema.Op, field string) {
	outs := make([]string, len(s.Outputs))
	for i, o := range s.Outputs {
		outs[i] = o.Name
	}
	list := strings.Join(outs, ", ")
	switch {
	case len(outs) == 0:
		v.errs.addf(r.pos, field, "%q (%s) has no outputs", r.node, s.Name)
	case r.output == "" && len(outs) == 1:
		r.output = outs[0]
	case r.output == "":
		v.errs.addf(r.pos, field, "%q (%s) has %s (%s): name one, as in %q", r.node, s.Name, english.Plural(len(outs), "output"), list, r.node+"."+outs[0])
	case !slices.Contains(outs, r.output):
		v.errs.addf(r.pos, field, "%q (%s) has no output %q; its outputs: %s", r.node, s.Name, r.output, list)
	}
}

// cycles reports each cycle among the operators, found by a depth-first
// search along their inputs.
func (v *validator) cycles() {
	preds := v.spec.preds()
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(preds))
	var path []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = onPath
		path = append(path, i)
		for _, j := range preds[i] {
			switch state[j] {
			case unseen:
				visit(j)
			case onPath:
				v.cycle(path[slices.Index(path, j):])
			}
		}
		path = path[:len(path)-1]
		state[i] = done
	}
	for i := range preds {
		if state[i] == unseen {
			visit(i)
		}
	}
}

// cycle reports the cycle of operators whose path along inputs is path,
// at the operator on it that comes first in the file.
func (v *validator) cycle(path []int) {
	c := slices.Clone(path)
	slices.Reverse(c) // in the direction data flows
	first := slices.Index(c, slices.Min(c))
	c = append(c[first:], c[:first]...)
	names := make([]string, len(c)+1)
	for k, i := range c {
		names[k] = v.spec.operators[i].name
	}
	names[len(c)] = names[0]
	v.errs.addf(v.spec.operators[c[0]].pos, fmt.Sprintf("operators[%d]", c[0]), "cycle: %s", strings.Join(names, " -> "))
}

// order returns the indices of s.operators in an order in which every
// operator comes after the operators its inputs refer to; of the
// operators that may come next, the first in the file does. It is
// meaningful after [Spec.Validate] succeeded: operators on a cycle, and
// after one, are left out.
func (s *Spec) order() []int {
	preds := s.preds()
	waiting := make([]int, len(preds)) // operators each waits for
	next := make([][]int, len(preds))  // operators waiting for each
	var ready []int                    // sorted
	for i, ps := range preds {
		waiting[i] = len(ps)
		for _, j := range ps {
			next[j] = append(next[j], i)
		}
		if len(ps) == 0 {
			ready = append(ready, i)
		}
	}
	order := make([]int, 0, len(preds))
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, j := range next[i] {
			waiting[j]--
			if waiting[j] == 0 {
				k, _ := slices.BinarySearch(ready, j)
				ready = slices.Insert(ready, k, j)
			}
		}
	}
	return order
}

// preds returns, for each operator, the operators its inputs refer to,
// each once.
func (s *Spec) preds() [][]int {
	index := make(map[string]int, len(s.operators))
	for i, n := range s.operators {
		index[n.name] = i
	}
	preds := make([][]int, len(s.operators))
	for i, n := range s.operators {
		for _, r := range n.inputs {
			if j, ok := index[r.node]; ok && !slices.Contains(preds[i], j) {
				preds[i] = append(preds[i], j)
			}
		}
	}
	return preds
}

// checkTypes propagates what is known of each batch before anything runs
// (schema.StaticType) along every edge, in order: a pipeline's inputs
// are the bytes of files (1-D uint8), or unknown when it is fed from
// memory (files false), and each operator's outputs follow from its
// schema ([schema.Op.Infer]). An operator input given what it cannot
// take is reported at the reference, as is an output whose writer (when
// outputs are encoded) cannot take what it is given: a float32 image into image.Encode
// fails here, not at the first file. Call it after [Spec.Validate]
// succeeded.
func (s *Spec) checkTypes(reg *op.Registry, files, encoded bool) error {
	types := map[string]schema.StaticType{} // inputs by name, outputs by "node.output"
	for _, in := range s.inputs {
		if files {
			types[in.name] = schema.StaticType{DTypes: []tensor.DType{tensor.Uint8}, NDim: 1}
		}
	}
	typeOf := func(r ref) schema.StaticType {
		if r.output == "" {
			return types[r.node]
		}
		return types[r.node+"."+r.output]
	}
	var errs errorList
	report := func(problems []error, refs []ref, field func(k int) string) {
		for _, p := range problems {
			te, ok := errors.AsType[*schema.InputTypeError](p)
			if !ok || te.Input >= len(refs) {
				continue
			}
			r := refs[te.Input]
			from := fmt.Sprintf("input %q", r.node)
			if r.output != "" {
				from = fmt.Sprintf("output %q of %q", r.output, r.node)
			}
			errs.add(r.pos, field(te.Input), p, fmt.Sprintf("%s (the %s)", te.Error(), from))
		}
	}
	for _, i := range s.order() {
		n := &s.operators[i]
		e, err := reg.Lookup(n.operator)
		if err != nil {
			continue // Validate reported it
		}
		vals, _ := e.Schema.Check(n.args, discard)
		ins := make([]schema.StaticType, len(n.inputs))
		for k, r := range n.inputs {
			ins[k] = typeOf(r)
		}
		outs, problems := e.Schema.Infer(vals, ins)
		report(problems, n.inputs, func(k int) string { return fmt.Sprintf("operators[%d].inputs[%d]", i, k) })
		for k, o := range e.Schema.Outputs {
			types[n.name+"."+o.Name] = outs[k]
		}
	}
	if encoded {
		for _, o := range s.outputs {
			e, err := reg.Lookup(writerOf(o.format).operator)
			if err != nil {
				continue // Compile reports a missing writer
			}
			_, problems := e.Schema.Infer(nil, []schema.StaticType{typeOf(o.from)})
			report(problems, []ref{o.from}, func(int) string { return "outputs." + o.name + ".from" })
		}
	}
	return errs.err()
}
