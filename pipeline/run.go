package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Sentinel errors of runs.
var (
	// ErrOutput: an output cannot be written.
	ErrOutput = errors.New("cannot write output")
	// ErrNothing: a run skipped every input and produced nothing.
	ErrNothing = errors.New("nothing to output")
)

// Registries is what a pipeline needs of a host: its operators and its
// graph passes. *dynop.Host is one.
type Registries interface {
	Operators() *op.Registry
	Passes() *graph.Passes
}

// Options configure Compile and Run.
type Options struct {
	// Inputs replaces the patterns of inputs, by input name; relative
	// paths are relative to the working directory.
	Inputs map[string][]string
	// OutDir replaces the directory of every output.
	OutDir string
	// Workers bounds the goroutines that run nodes; 0 means GOMAXPROCS.
	Workers int
	// NoFuse turns off the fusion pass (graph.FuseDesc).
	NoFuse bool
	// Progress, if set, is called after each batch.
	Progress func(Progress)
	// Trace keeps a span per node execution, for WriteTrace.
	Trace bool
	// Logger receives what the run skips and the passes it runs; nil
	// discards it.
	Logger *slog.Logger
}

// Progress is where a run is.
type Progress struct {
	Batch, Batches  int // batches done, of all
	Images, Skipped int // images done and skipped so far
}

// Pipeline is a compiled pipeline: its graph built, its inputs found and
// its outputs checked, ready to Run. Close it when done.
type Pipeline struct {
	spec    *Spec
	opts    Options
	graph   *graph.Graph
	files   [][]string // per input, the files in order
	bases   []string   // per sample, the output file name without extension
	outputs []outputPlan
	log     *slog.Logger

	mu      sync.Mutex
	stats   map[*graph.Node]*nodeStat
	spans   []graph.Span
	batches []batchSpan
	start   time.Time
}

type outputPlan struct {
	name, dir, ext string
	suffix         string // added to file names when outputs share dir
}

type nodeStat struct {
	calls int
	time  time.Duration
}

type batchSpan struct {
	start time.Time
	dur   time.Duration
	n     int
}

// Compile validates spec against the host's operator schemas before any
// plugin code runs, finds the input files, checks that the output
// directories can be written, and builds the graph with the host's
// passes (which starts the plugins it needs).
func Compile(ctx context.Context, h Registries, spec *Spec, opts Options) (*Pipeline, error) {
	if err := spec.Validate(h.Operators()); err != nil {
		return nil, err
	}
	p := &Pipeline{spec: spec, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), stats: map[*graph.Node]*nodeStat{}}
	if err := p.findInputs(); err != nil {
		return nil, err
	}
	if err := p.planOutputs(); err != nil {
		return nil, err
	}
	g, err := p.buildGraph(ctx, h)
	if err != nil {
		return nil, err
	}
	p.graph = g
	return p, nil
}

// Graph returns the pipeline's graph, after passes.
func (p *Pipeline) Graph() *graph.Graph { return p.graph }

// Close closes the graph, which lets the plugins it used stop.
func (p *Pipeline) Close() error { return p.graph.Close() }

func (p *Pipeline) findInputs() error {
	for _, in := range p.spec.inputs {
		if over, ok := p.opts.Inputs[in.name]; ok {
			abs := make([]string, len(over))
			for i, f := range over {
				a, err := filepath.Abs(f)
				if err != nil {
					return err
				}
				abs[i] = a
			}
			in.files = abs
		}
		files, err := p.spec.files(in)
		if err != nil {
			return err
		}
		p.files = append(p.files, files)
	}
	for name := range p.opts.Inputs {
		if !slices.ContainsFunc(p.spec.inputs, func(in input) bool { return in.name == name }) {
			return fmt.Errorf("pipeline %s: %w: Options.Inputs names input %q; the pipeline's inputs are %s", p.spec.file, ErrInvalid, name, strings.Join(p.spec.Inputs(), ", "))
		}
	}
	for k := 1; k < len(p.files); k++ {
		if len(p.files[k]) != len(p.files[0]) {
			return fmt.Errorf("pipeline %s: %w: input %q has %d files, input %q %d: inputs are zipped, so they must have as many",
				p.spec.file, ErrInvalid, p.spec.inputs[0].name, len(p.files[0]), p.spec.inputs[k].name, len(p.files[k]))
		}
	}
	// Output files are named after the first input's files, made unique
	// with a suffix that is no other file's name either.
	stem := func(f string) string { return strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)) }
	used, taken := map[string]bool{}, map[string]bool{}
	for _, f := range p.files[0] {
		used[stem(f)] = true
	}
	for _, f := range p.files[0] {
		base := stem(f)
		for k := 2; taken[base] || base != stem(f) && used[base]; k++ {
			base = fmt.Sprintf("%s-%d", stem(f), k)
		}
		taken[base] = true
		p.bases = append(p.bases, base)
	}
	return nil
}

// planOutputs decides each output's directory and checks it can be
// written, by creating it and a file in it.
func (p *Pipeline) planOutputs() error {
	perDir := map[string]int{}
	for _, o := range p.spec.outputs {
		dir := o.dir
		if p.opts.OutDir != "" {
			dir = p.opts.OutDir
		} else if dir != "" && !filepath.IsAbs(dir) {
			dir = filepath.Join(p.spec.dir, dir)
		}
		if dir == "" {
			return fmt.Errorf("%s: outputs.%s: %w: no dir: give one in the pipeline or with --out", o.pos, o.name, ErrOutput)
		}
		dir, err := filepath.Abs(dir) // one directory, one key, however spelled
		if err != nil {
			return err
		}
		if err := writable(dir); err != nil {
			return fmt.Errorf("%s: outputs.%s: %w: %w", o.pos, o.name, ErrOutput, err)
		}
		ext := ".png"
		if o.format == "jpeg" {
			ext = ".jpg"
		}
		p.outputs = append(p.outputs, outputPlan{name: o.name, dir: dir, ext: ext})
		perDir[dir]++
	}
	for i := range p.outputs {
		if perDir[p.outputs[i].dir] > 1 {
			p.outputs[i].suffix = "-" + p.outputs[i].name
		}
	}
	return p.checkOverwrites()
}

// checkOverwrites refuses outputs that would replace an input file.
func (p *Pipeline) checkOverwrites() error {
	inputs := map[string]bool{}
	for _, fs := range p.files {
		for _, f := range fs {
			if abs, err := filepath.Abs(f); err == nil {
				inputs[abs] = true
			}
		}
	}
	for k, o := range p.outputs {
		for _, base := range p.bases {
			if final := filepath.Join(o.dir, base+o.suffix+o.ext); inputs[final] {
				return fmt.Errorf("%s: outputs.%s: %w: it would replace the input file %s; write into another directory",
					p.spec.outputs[k].pos, o.name, ErrOutput, final)
			}
		}
	}
	return nil
}

func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".dynop-check-*")
	if err != nil {
		return fmt.Errorf("directory %s cannot be written: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// buildGraph makes the graph: an input node per input, a node per
// operator, an image.Encode node per output, then runs the passes.
func (p *Pipeline) buildGraph(ctx context.Context, h Registries) (*graph.Graph, error) {
	name := cmp.Or(p.spec.name, strings.TrimSuffix(filepath.Base(p.spec.file), filepath.Ext(p.spec.file)))
	g := graph.New(name)
	ports := map[string]graph.Port{}
	for _, in := range p.spec.inputs {
		n, err := g.AddInput(in.name)
		if err != nil {
			return nil, err
		}
		ports[in.name] = n.Out(0)
	}
	port := func(r ref) (graph.Port, error) {
		if r.output == "" {
			return ports[r.node], nil
		}
		pt, ok := ports[r.node+"."+r.output]
		if !ok {
			return graph.Port{}, fmt.Errorf("%s: %w: %s is not known", r.pos, ErrInvalid, r) // Validate makes this impossible
		}
		return pt, nil
	}
	for _, i := range p.spec.order() {
		s := p.spec.operators[i]
		var ins []graph.Port
		for _, r := range s.inputs {
			pt, err := port(r)
			if err != nil {
				return nil, err
			}
			ins = append(ins, pt)
		}
		n, err := g.AddNode(s.name, s.operator, s.args, ins...)
		if err != nil {
			return nil, err
		}
		n.Device = s.device
		e, err := h.Operators().Lookup(s.operator)
		if err != nil {
			return nil, err
		}
		for k, o := range e.Schema.Outputs {
			ports[s.name+"."+o.Name] = n.Out(k)
		}
	}
	for _, o := range p.spec.outputs {
		from, err := port(o.from)
		if err != nil {
			return nil, err
		}
		args := schema.Args{"format": cmp.Or(o.format, "png")}
		if o.quality > 0 {
			args["quality"] = o.quality
		}
		enc, err := g.AddNode("encode("+o.name+")", encodeOperator, args, from)
		if err != nil {
			return nil, err
		}
		if err := g.AddOutput(o.name, enc.Out(0)); err != nil {
			return nil, err
		}
	}
	opts := graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate(), Logger: p.log}
	if p.opts.NoFuse {
		opts.Skip = []string{graph.FuseDesc.Name}
	}
	if err := graph.Build(ctx, g, opts); err != nil {
		return nil, errors.Join(fmt.Errorf("pipeline %s: %w", p.spec.file, err), g.Close())
	}
	g.Executor = graph.Parallel{Workers: p.opts.Workers}
	g.Observer = p.observe
	return g, nil
}

// encodeOperator is the operator that encodes a pipeline's outputs.
const encodeOperator = "image.Encode"

func (p *Pipeline) observe(s graph.Span) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Node.Graph().Parent() == nil {
		st := p.stats[s.Node]
		if st == nil {
			st = &nodeStat{}
			p.stats[s.Node] = st
		}
		st.calls++
		st.time += s.Duration
	}
	if p.opts.Trace {
		p.spans = append(p.spans, s)
	}
}

// Run runs the pipeline over its inputs, batch by batch, and writes the
// outputs. Outputs are written into a staging directory inside each
// output directory and moved into place only when the whole run
// succeeds: a run that fails or is cancelled leaves no output files. An
// input that cannot be read or decoded stops the run, naming the file,
// or with on_error: skip is skipped and reported in the summary.
func (p *Pipeline) Run(ctx context.Context) (sum *Summary, err error) {
	p.mu.Lock()
	p.start = time.Now()
	clear(p.stats)
	p.spans, p.batches = nil, nil
	p.mu.Unlock()
	sum = &Summary{Pipeline: p.graph.Name(), File: p.spec.file, Workers: cmp.Or(p.opts.Workers, runtime.GOMAXPROCS(0)), BatchSize: p.spec.batchSize, Fused: !p.opts.NoFuse}
	stage, err := newStaging(p.outputs)
	if err != nil {
		return sum, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, stage.discard())
		}
	}()
	n := len(p.files[0])
	batches := (n + p.spec.batchSize - 1) / p.spec.batchSize
	for b := 0; b < n; b += p.spec.batchSize {
		idx := make([]int, 0, p.spec.batchSize)
		for i := b; i < min(b+p.spec.batchSize, n); i++ {
			idx = append(idx, i)
		}
		start := time.Now()
		if err := p.runBatch(ctx, idx, stage, sum); err != nil {
			return p.summarize(sum), err
		}
		p.mu.Lock()
		p.batches = append(p.batches, batchSpan{start, time.Since(start), len(idx)})
		p.mu.Unlock()
		sum.Batches++
		if p.opts.Progress != nil {
			p.opts.Progress(Progress{Batch: sum.Batches, Batches: batches, Images: sum.Images, Skipped: len(sum.Skipped)})
		}
	}
	if err := ctx.Err(); err != nil {
		return p.summarize(sum), err
	}
	if sum.Images == 0 {
		return p.summarize(sum), fmt.Errorf("%w: all %d inputs were skipped", ErrNothing, len(sum.Skipped))
	}
	written, err := stage.commit()
	sum.Outputs = written
	return p.summarize(sum), err
}

// runBatch runs the samples idx. A batch that fails is run again sample
// by sample, to name the file at fault.
func (p *Pipeline) runBatch(ctx context.Context, idx []int, stage *staging, sum *Summary) error {
	inputs, idx, err := p.read(idx, sum)
	if err != nil || len(idx) == 0 {
		return err
	}
	outs, err := p.graph.Execute(ctx, inputs...)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(idx) > 1 {
			for _, i := range idx {
				if err := p.runBatch(ctx, []int{i}, stage, sum); err != nil {
					return err
				}
			}
			return nil
		}
		return p.fileFailed(idx[0], err, sum)
	}
	for k, out := range outs {
		o := p.outputs[k]
		for j, i := range idx {
			data, err := out.Sample(j).Bytes()
			if err != nil {
				return err
			}
			if err := stage.write(k, p.bases[i]+o.suffix+o.ext, data); err != nil {
				return err
			}
		}
	}
	sum.Images += len(idx)
	return nil
}

// fileFailed stops the run with err, naming sample i's files, or skips
// the sample under on_error: skip.
func (p *Pipeline) fileFailed(i int, err error, sum *Summary) error {
	var files []string
	for _, fs := range p.files {
		files = append(files, fs[i])
	}
	if p.spec.onError != onErrorSkip {
		return fmt.Errorf("input %s: %w (on_error: skip would skip it)", strings.Join(files, ", "), err)
	}
	p.log.Warn("skipping input", "file", strings.Join(files, ", "), "err", err)
	sum.Skipped = append(sum.Skipped, Skipped{File: strings.Join(files, ", "), Error: err.Error()})
	return nil
}

// read reads the files of samples idx into one batch per input: 1-D
// uint8 samples of the files' bytes. Files that cannot be read fail the
// run or are skipped; it returns the samples that remain.
func (p *Pipeline) read(idx []int, sum *Summary) ([]*tensor.Batch, []int, error) {
	samples := make([][]*tensor.Tensor, len(p.files))
	var kept []int
next:
	for _, i := range idx {
		row := make([]*tensor.Tensor, len(p.files))
		for k, fs := range p.files {
			data, err := os.ReadFile(fs[i])
			if err == nil && len(data) == 0 {
				err = errors.New("empty file")
			}
			var t *tensor.Tensor
			if err == nil {
				t, err = tensor.FromSlice(data, int64(len(data)))
			}
			if err != nil {
				if err := p.fileFailed(i, err, sum); err != nil {
					return nil, nil, err
				}
				continue next
			}
			row[k] = t
		}
		for k := range row {
			samples[k] = append(samples[k], row[k])
		}
		kept = append(kept, i)
	}
	if len(kept) == 0 {
		return nil, nil, nil
	}
	batches := make([]*tensor.Batch, len(samples))
	for k, s := range samples {
		b, err := tensor.NewBatch(s...)
		if err != nil {
			return nil, nil, err
		}
		batches[k] = b
	}
	return batches, kept, nil
}

// pluginOf returns the plugins that provide n's operators, subgraphs'
// included, or "".
func pluginOf(n *graph.Node) string {
	switch d := n.Definition().(type) {
	case *graph.OperatorDef:
		return d.Instance.Plugin()
	case *graph.Graph:
		var plugins []string
		for _, m := range d.Nodes() {
			for _, p := range strings.Split(pluginOf(m), ", ") {
				if p != "" && !slices.Contains(plugins, p) {
					plugins = append(plugins, p)
				}
			}
		}
		return strings.Join(plugins, ", ")
	}
	return ""
}

// definitionOf names n's definition; a subgraph by its members'.
func definitionOf(n *graph.Node) string {
	sub, ok := n.Definition().(*graph.Graph)
	if !ok {
		return n.Definition().Name()
	}
	var defs []string
	for _, m := range sub.Nodes() {
		if !m.IsInput() {
			defs = append(defs, definitionOf(m))
		}
	}
	return "[" + strings.Join(defs, " ") + "]"
}
