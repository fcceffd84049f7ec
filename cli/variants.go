package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// variantEntry is one variant in inspect's JSON.
type variantEntry struct {
	Name      string   `json:"name"`
	Needs     []string `json:"needs"`
	Runnable  bool     `json:"runnable"`
	Chosen    bool     `json:"chosen,omitempty"`
	Reference bool     `json:"reference,omitempty"`
	Why       string   `json:"why"`
}

// cpuEntry is the CPU in inspect's JSON.
type cpuEntry struct {
	Available []string `json:"available"`
	Off       []string `json:"off,omitempty"`
}

func newCPUEntry(c dispatch.CPU) cpuEntry {
	return cpuEntry{Available: nonNil(c.Available().Names()), Off: (c.Off & c.Has).Names()}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// operatorJSON is the output of inspect --json OPERATOR: schema
// dynop.operator/v2.
type operatorJSON struct {
	Schema   string         `json:"schema"`
	Operator opEntry        `json:"operator"`
	CPU      cpuEntry       `json:"cpu"`
	Variants []variantEntry `json:"variants,omitempty"`
	Graphs   *graphsEntry   `json:"graphs,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// inspectOperator prints an operator's schema, then its variants on the
// CPU: which one runs and why, as text painted with pal or as JSON
// (schema dynop.operator/v2). Learning the variants starts the plugin.
func inspectOperator(ctx context.Context, w io.Writer, h *dynop.Host, e op.Entry, asJSON bool, pal palette) error {
	ch, verr := h.Operators().Variants(ctx, e.Schema.Name)
	var graphs *graphsEntry
	if verr == nil {
		g, err := inGraphs(ctx, h, e)
		if err != nil {
			verr = fmt.Errorf("what graphs run for it: %w", err)
		} else {
			graphs = &g
		}
	}
	var variants []variantEntry
	for _, s := range ch.Variants {
		variants = append(variants, variantEntry{Name: s.Name, Needs: nonNil(s.Needs.Names()), Runnable: s.Runnable(),
			Chosen: s.Chosen, Reference: s.Reference, Why: s.Why()})
	}
	if asJSON {
		out := operatorJSON{"dynop.operator/v2", newOpEntry(e), newCPUEntry(h.CPU()), variants, graphs, errString(verr)}
		enc := newJSONEncoder(w)
		if err := enc.Encode(out); err != nil {
			return err
		}
		return verr
	}
	if err := writeOperator(w, e, pal); err != nil {
		return err
	}
	var t fieldTable
	t.row("cpu", h.CPU().String())
	switch {
	case verr != nil:
		t.styledRow("variants", fmt.Sprintf("unknown: %v", verr), styleRed)
	case len(variants) == 0:
		t.row("variants", "none: one implementation, for every CPU")
	default:
		t.row("variants", "best first; the last is the reference")
		for _, v := range variants {
			mark, st := " ", stylePlain
			switch {
			case v.Chosen:
				mark, st = "*", styleGreen
			case !v.Runnable:
				st = styleDim
			}
			t.add(cell{text: fmt.Sprintf("  %s %s", mark, v.Name), style: st},
				cell{text: "needs " + strings.Join(cmpOr(v.Needs, "nothing"), ",")}, cell{text: v.Why, style: st})
		}
	}
	if graphs != nil {
		if graphs.Runs == e.Schema.Name {
			t.row("in graphs", "runs as named: "+graphs.Why)
		} else {
			t.styledRow("in graphs", graphs.Runs+" runs in its place: "+graphs.Why, styleBold)
		}
		for _, r := range graphs.Replaces {
			t.row("replaces", fmt.Sprintf("%s in graphs (pass %s)", r.Operator, r.Pass))
		}
	}
	if err := t.write(w, pal); err != nil {
		return err
	}
	return verr
}

func cmpOr(s []string, none string) []string {
	if len(s) == 0 {
		return []string{none}
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// benchOptions are the flags of dynop bench.
type benchOptions struct {
	shape  []int64
	dtype  tensor.DType
	batch  int
	args   schema.Args
	budget time.Duration
}

func benchCommand(ctx context.Context, args []string, w, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	addSandboxFlag(fs)
	shape := fs.String("shape", "1080x1920x3", "the shape of each input sample, dimensions separated by x")
	dtype := fs.String("dtype", "", "the inputs' dtype (default: the first the operator's schema allows)")
	batch := fs.Int("batch", 1, "samples per call")
	budget := fs.Duration("time", 500*time.Millisecond, "time to spend on each variant")
	var argList listFlag
	fs.Var(&argList, "arg", "an operator argument NAME=VALUE, VALUE in JSON or a bare string (repeatable)")
	pos, err := parseInterleaved("bench", fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return fmt.Errorf("%w: bench takes an operator name", errUsage)
	}
	o := benchOptions{batch: *batch, budget: *budget, args: schema.Args{}}
	if o.shape, err = parseShape(*shape); err != nil {
		return fmt.Errorf("%w: bench: --shape %q: %v", errUsage, *shape, err)
	}
	if *batch < 1 {
		return fmt.Errorf("%w: bench: --batch %d: want at least 1", errUsage, *batch)
	}
	if *budget <= 0 {
		return fmt.Errorf("%w: bench: --time %v: want a positive duration", errUsage, *budget)
	}
	for _, a := range argList {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return fmt.Errorf("%w: bench: --arg %q: want NAME=VALUE", errUsage, a)
		}
		o.args[name] = argValue(value)
	}
	h, err := openHost(ctx, pos[1:])
	if err != nil {
		return err
	}
	defer closeAll(stderr, h)
	e, err := h.Operators().Lookup(pos[0])
	if err != nil {
		return err
	}
	if o.dtype, err = benchDType(e.Schema, *dtype); err != nil {
		return err
	}
	return bench(ctx, w, h, e.Schema, o)
}

// parseShape reads "1080x1920x3" (or commas).
func parseShape(s string) ([]int64, error) {
	var shape []int64
	for _, d := range strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == ',' }) {
		n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("dimension %q is not a count", d)
		}
		shape = append(shape, n)
	}
	if len(shape) == 0 {
		return nil, errors.New("no dimensions")
	}
	return shape, nil
}

// argValue reads a --arg value as JSON, or as a string if it is not JSON.
func argValue(s string) any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return s
	}
	return v
}

func benchDType(s schema.Op, name string) (tensor.DType, error) {
	if name != "" {
		return tensor.ParseDType(name)
	}
	if len(s.Inputs) > 0 && len(s.Inputs[0].DTypes) > 0 {
		return s.Inputs[0].DTypes[0], nil
	}
	return tensor.Float32, nil
}

// benchResult is one variant's timing.
type benchResult struct {
	status  dispatch.Status
	median  time.Duration
	calls   int
	agrees  error // against the reference's output
	skipped string
}

// bench times every runnable variant of the operator (or its one
// implementation) on random inputs and prints a table.
func bench(ctx context.Context, w io.Writer, h *dynop.Host, s schema.Op, o benchOptions) error {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := make([]*tensor.Batch, s.MinInputs())
	var inBytes int64
	for i := range inputs {
		layout := ""
		for _, l := range s.Inputs[i].Layouts {
			if len(l) == len(o.shape) {
				layout = l
			}
		}
		shapes := make([][]int64, o.batch)
		for j := range shapes {
			shapes[j] = o.shape
		}
		b, err := tensor.Random(rng, o.dtype, layout, shapes)
		if err != nil {
			return fmt.Errorf("bench: input %q: %w", s.Inputs[i].Name, err)
		}
		inputs[i] = b
		for _, t := range b.Samples() {
			inBytes += t.NBytes()
		}
	}
	ch, err := h.Operators().Variants(ctx, s.Name)
	if err != nil {
		return err
	}
	statuses := ch.Variants
	if len(statuses) == 0 {
		statuses = []dispatch.Status{{Variant: dispatch.Variant{Name: "(only)"}, Chosen: true, Reference: true}}
	}
	results := make([]benchResult, len(statuses))
	var want []*tensor.Batch
	for i := len(statuses) - 1; i >= 0; i-- { // the reference first, to compare the others with it
		st := statuses[i]
		r := &results[i]
		r.status = st
		if !st.Runnable() {
			r.skipped = st.Why()
			continue
		}
		var opts []op.Option
		if len(ch.Variants) > 0 {
			opts = append(opts, op.WithVariant(st.Name))
		}
		outs, err := timeVariant(ctx, h, s.Name, o, inputs, opts, r)
		if err != nil {
			return fmt.Errorf("bench: variant %s: %w", st.Name, err)
		}
		if st.Reference {
			want = outs
		} else if want != nil {
			r.agrees = op.Agree(outs, want)
		}
	}
	return writeBench(w, h, s, o, inBytes, results)
}

// timeVariant runs one variant for the time budget (at least three calls)
// and records the median time of a call.
func timeVariant(ctx context.Context, h *dynop.Host, name string, o benchOptions, inputs []*tensor.Batch, opts []op.Option, r *benchResult) ([]*tensor.Batch, error) {
	in, err := h.NewOperator(ctx, name, o.args, opts...)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	outs, err := in.Exec(ctx, inputs...) // sets up, allocates and warms up
	if err != nil {
		return nil, err
	}
	var times []time.Duration
	for start := time.Now(); len(times) < 3 || time.Since(start) < o.budget; {
		t0 := time.Now()
		if err := in.Run(ctx, outs, inputs); err != nil {
			return nil, err
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	r.median, r.calls = times[len(times)/2], len(times)
	return outs, nil
}

func writeBench(w io.Writer, h *dynop.Host, s schema.Op, o benchOptions, inBytes int64, results []benchResult) error {
	argText := ""
	if len(o.args) > 0 {
		b, _ := json.Marshal(o.args)
		argText = " args " + string(b)
	}
	fmt.Fprintf(w, "%s on %d × %s %v%s\ncpu %s\n\n", escapeCell(s.Name), o.batch, o.dtype, o.shape, argText, h.CPU())
	var ref time.Duration
	for _, r := range results {
		if r.status.Reference {
			ref = r.median
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "VARIANT\tNEEDS\tTIME/CALL\tINPUT MB/s\tVS REFERENCE\tCALLS\t\n")
	for _, r := range results {
		st := r.status
		needs := cmpOr(st.Needs.Names(), "nothing")
		if r.skipped != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\tskipped: %s\n", escapeCell(st.Name), strings.Join(needs, ","), escapeCell(r.skipped))
			continue
		}
		var notes []string
		if st.Chosen {
			notes = append(notes, "chosen")
		}
		if st.Reference {
			notes = append(notes, "reference")
		}
		if r.agrees != nil {
			notes = append(notes, "DISAGREES with the reference: "+r.agrees.Error())
		}
		mbs := float64(inBytes) / r.median.Seconds() / 1e6
		fmt.Fprintf(tw, "%s\t%s\t%v\t%.0f\t%.2f×\t%d\t%s\n", escapeCell(st.Name), strings.Join(needs, ","), roundDuration(r.median),
			mbs, ref.Seconds()/r.median.Seconds(), r.calls, escapeCell(strings.Join(notes, "; ")))
	}
	return tw.Flush()
}

// roundDuration keeps three or four significant digits.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(time.Nanosecond * 10)
	}
	return d
}
