package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
	"golang.org/x/sys/unix"
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
	// Workers is how many workers run the pipeline; 0 means GOMAXPROCS.
	// Each worker has its own copy of the graph, with its own operator
	// instances (an operator instance is never called from two
	// goroutines at once; an operator safe for concurrent calls,
	// op.SharedImpl, is made once and its instances share it), and a
	// batch's samples are split among the workers: the outputs are those
	// of a one-worker run, sample for sample.
	Workers int
	// Stdin is what an input's "list: -" reads; nil means os.Stdin.
	Stdin io.Reader
	// Memory compiles the pipeline for [Pipeline.Stream]: its inputs come
	// from memory instead of its files, and its outputs are the tensors
	// of each output's node, not encoded, handed back instead of written.
	// Its files and directories are not looked at; Run refuses it.
	Memory bool
	// Tensors compiles the pipeline for [Pipeline.Batches]: its inputs
	// are read from their files, as for Run, and its outputs are the
	// tensors of each output's node, not encoded, handed back batch by
	// batch instead of written (as a training loop takes them). Output
	// directories are not looked at; Run refuses it.
	Tensors bool
	// Atomic stages the outputs and moves them into place only when the
	// whole run succeeds: a run that fails leaves no output at all, and
	// there is no journal. For small runs; it cannot be resumed.
	Atomic bool
	// Resume finishes a run that stopped: it skips the inputs whose
	// outputs the run's journal lists as done and are all there, and
	// runs the rest. Without a journal it runs every input. A journal of
	// another pipeline file, of the file before it changed, or of
	// another shard is refused ([ErrJournal]).
	Resume bool
	// Journal is where the run records, a JSON line per input, what
	// became of it (its files, outputs, status and error) after a header
	// naming the pipeline file, its SHA-256 and the shard. "" means
	// .dynop-journal-NAME[-shard-I-of-N].jsonl in the first output's
	// directory.
	Journal string
	// Shard, if its Count is more than 1, runs only the inputs of one
	// shard: see [Shard].
	Shard Shard
	// Prefetch bounds the batches in flight: while the workers compute
	// batch k, the files of the next ones are read and their samples
	// handed to workers that are free, up to Prefetch batches at once.
	// Memory is bounded by the batches in flight, never by the number of
	// inputs. 0 means 2.
	Prefetch int
	// NoFuse turns off the fusion pass (graph.FuseDesc).
	NoFuse bool
	// SkipPasses names passes not to run, such as
	// "codec.native-codecs.decode" to decode with the Go image.Decode
	// rather than the native codecs. A name the host has no pass of is
	// an error ([ErrInvalid]).
	SkipPasses []string
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
	graph   *graph.Graph   // graphs[0]
	graphs  []*graph.Graph // one per worker
	files   [][]string     // per input, the files in order
	rels    []string       // per sample, its first file's path relative to its root
	bases   []string       // per sample, the output file name without extension
	outputs []outputPlan
	log     *slog.Logger

	mu      sync.Mutex
	spare   [][]byte             // buffers of files read, handed back when their batch is written
	stats   map[string]*nodeStat // by top-level node name
	spans   []graph.Span
	batches []batchSpan
	start   time.Time
}

type outputPlan struct {
	name, dir, ext string
	suffix         string // added to file names when outputs share dir
}

type nodeStat struct {
	node  *graph.Node // the node in graphs[0]
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
	if opts.Memory && opts.Tensors {
		return nil, fmt.Errorf("pipeline %s: %w: Options.Memory and Tensors: a pipeline takes its inputs from memory (Stream) or from its files (Batches)", spec.file, ErrInvalid)
	}
	if err := spec.checkTypes(h.Operators(), !opts.Memory, !opts.Memory && !opts.Tensors); err != nil {
		return nil, err
	}
	if opts.Workers < 0 || opts.Prefetch < 0 {
		return nil, fmt.Errorf("pipeline %s: %w: Options.Workers %d and Prefetch %d: each must be 0 (the default) or more", spec.file, ErrInvalid, opts.Workers, opts.Prefetch)
	}
	if opts.Atomic && opts.Resume {
		return nil, fmt.Errorf("pipeline %s: %w: Options.Atomic and Resume: an atomic run keeps no journal to resume from", spec.file, ErrInvalid)
	}
	if opts.Shard != (Shard{}) {
		if err := opts.Shard.Validate(); err != nil {
			return nil, fmt.Errorf("pipeline %s: %w: Options.Shard: %w", spec.file, ErrInvalid, err)
		}
	}
	if len(opts.SkipPasses) > 0 {
		var known []string
		for _, e := range h.Passes().List() {
			known = append(known, e.Desc.Name)
		}
		for _, name := range opts.SkipPasses {
			if !slices.Contains(known, name) {
				return nil, fmt.Errorf("pipeline %s: %w: skipping pass %q: the host has no pass of that name (it has %s)", spec.file, ErrInvalid, name, strings.Join(known, ", "))
			}
		}
	}
	opts.Workers = cmp.Or(opts.Workers, runtime.GOMAXPROCS(0))
	opts.Prefetch = cmp.Or(opts.Prefetch, 2)
	p := &Pipeline{spec: spec, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), stats: map[string]*nodeStat{}}
	if !opts.Memory && !opts.Tensors {
		var errs errorList
		for _, o := range spec.outputs {
			if w := writerOf(o.format); !hasOperator(h, w.operator) {
				errs.addf(o.pos, "outputs."+o.name+".format", "format %s is written by operator %s (plugin %s), which this host does not have", o.format, w.operator, w.plugin)
			}
		}
		if err := errs.err(); err != nil {
			return nil, err
		}
	}
	if !opts.Memory {
		if err := p.findInputs(); err != nil {
			return nil, err
		}
	}
	if !opts.Memory && !opts.Tensors {
		if err := p.planOutputs(); err != nil {
			return nil, err
		}
	}
	for w := range opts.Workers {
		g, err := p.buildGraph(ctx, h, w)
		if err != nil {
			return nil, errors.Join(err, p.Close())
		}
		p.graphs = append(p.graphs, g)
	}
	p.graph = p.graphs[0]
	return p, nil
}

// Graph returns the pipeline's graph, after passes.
func (p *Pipeline) Graph() *graph.Graph { return p.graph }

// Spec returns the pipeline's spec.
func (p *Pipeline) Spec() *Spec { return p.spec }

// Samples returns how many samples (a file of each input) Run or Batches
// goes over: those of the shard, with Options.Shard; 0 for a pipeline
// compiled with Options.Memory.
func (p *Pipeline) Samples() int {
	if len(p.files) == 0 {
		return 0
	}
	return len(p.files[0])
}

// Close closes the graphs, which lets the plugins they used stop.
func (p *Pipeline) Close() error {
	var errs []error
	for _, g := range p.graphs {
		errs = append(errs, g.Close())
	}
	return errors.Join(errs...)
}

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
		files, rels, err := p.spec.files(in, cmp.Or[io.Reader](p.opts.Stdin, os.Stdin))
		if err != nil {
			return err
		}
		if left := p.spec.leftOut(in); len(left) > 0 {
			p.log.Warn("input files left out: no decoder reads their format (a directory takes PNG, JPEG and WebP)",
				"input", in.name, "count", len(left), "first", left[0])
		}
		p.files = append(p.files, files)
		if p.rels == nil {
			p.rels = rels // the first input's: samples are sharded by them
		}
	}
	for name := range p.opts.Inputs {
		if !slices.ContainsFunc(p.spec.inputs, func(in input) bool { return in.name == name }) {
			return fmt.Errorf("pipeline %s: %w: Options.Inputs names input %q; the pipeline's inputs are %s", p.spec.file, ErrInvalid, name, strings.Join(p.spec.Inputs(), ", "))
		}
	}
	for k := 1; k < len(p.files); k++ {
		if len(p.files[k]) != len(p.files[0]) {
			return fmt.Errorf("pipeline %s: %w: input %q has %s, input %q %d: inputs are zipped, so they must have as many",
				p.spec.file, ErrInvalid, p.spec.inputs[0].name, english.Plural(len(p.files[0]), "file"), p.spec.inputs[k].name, len(p.files[k]))
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
	// A shard keeps its share of the samples, named as in a run of all.
	if p.opts.Shard.Count > 1 {
		var keep []int
		for i, rel := range p.rels {
			if p.opts.Shard.has(rel) {
				keep = append(keep, i)
			}
		}
		pick := func(s []string) []string {
			out := make([]string, len(keep))
			for j, i := range keep {
				out[j] = s[i]
			}
			return out
		}
		for k := range p.files {
			p.files[k] = pick(p.files[k])
		}
		p.bases, p.rels = pick(p.bases), pick(p.rels)
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
		p.outputs = append(p.outputs, outputPlan{name: o.name, dir: dir, ext: writerOf(o.format).ext})
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

// writable makes dir if need be and checks that a file can be created in
// it. The file has no name where the system allows (O_TMPFILE), so a
// process killed during the check leaves nothing behind in an output
// directory.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return unix.Close(fd)
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("directory %s cannot be written: %w", dir, &os.PathError{Op: "open", Path: dir, Err: err})
	}
	// No O_TMPFILE on this file system: a named file, removed at once.
	f, err := os.CreateTemp(dir, ".dynop-check-*")
	if err != nil {
		return fmt.Errorf("directory %s cannot be written: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// buildGraph makes worker w's graph: an input node per input, a node
// per operator, an image.Encode node per output, then runs the passes.
func (p *Pipeline) buildGraph(ctx context.Context, h Registries, w int) (*graph.Graph, error) {
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
		if p.opts.Memory || p.opts.Tensors { // the tensors themselves, not encoded
			if err := g.AddOutput(o.name, from); err != nil {
				return nil, err
			}
			continue
		}
		w := writerOf(o.format)
		args := schema.Args{}
		if w.operator == imageEncode {
			args["format"] = cmp.Or(o.format, "png")
			if o.quality > 0 {
				args["quality"] = o.quality
			}
		}
		enc, err := g.AddNode("encode("+o.name+")", w.operator, args, from)
		if err != nil {
			return nil, err
		}
		if err := g.AddOutput(o.name, enc.Out(0)); err != nil {
			return nil, err
		}
	}
	opts := graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate(), Logger: p.log}
	if w > 0 { // operators safe for concurrent calls are made once, for every worker
		opts.ShareWith = p.graphs[0]
	}
	opts.Skip = slices.Clone(p.opts.SkipPasses)
	if p.opts.NoFuse {
		opts.Skip = append(opts.Skip, graph.FuseDesc.Name)
	}
	if err := graph.Build(ctx, g, opts); err != nil {
		return nil, errors.Join(fmt.Errorf("pipeline %s: %w", p.spec.file, err), g.Close())
	}
	// The workers are the parallelism: each runs its graph's nodes one
	// after another, on its share of a batch's samples.
	g.Executor = graph.Serial{}
	g.Observer = func(s graph.Span) {
		s.Worker += w
		p.observe(s)
	}
	return g, nil
}

// hasOperator reports whether h has operator name.
func hasOperator(h Registries, name string) bool {
	_, err := h.Operators().Lookup(name)
	return err == nil
}

// A writer is how an output format is written: the operator that turns
// a tensor into a file's bytes, the plugin that has it, and the files'
// extension.
type writer struct{ operator, plugin, ext string }

// imageEncode writes images.
const imageEncode = "image.Encode"

// writerOf returns the writer of an output format: png (the default),
// jpeg, or npy (NumPy's .npy).
func writerOf(format string) writer {
	switch format {
	case "jpeg":
		return writer{imageEncode, "dynop.plugin.image", ".jpg"}
	case "npy":
		return writer{"npy.Encode", "dynop.plugin.npy", ".npy"}
	}
	return writer{imageEncode, "dynop.plugin.image", ".png"}
}

func (p *Pipeline) observe(s graph.Span) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Node.Graph().Parent() == nil {
		st := p.stats[s.Node.Name()]
		if st == nil {
			st = &nodeStat{node: p.graph.Node(s.Node.Name())}
			p.stats[s.Node.Name()] = st
		}
		st.calls++
		st.time += s.Duration
	}
	if p.opts.Trace {
		p.spans = append(p.spans, s)
	}
}

// Run runs the pipeline over its inputs, batch by batch, and writes the
// outputs. Each output file is written atomically (a temporary file in
// its directory, renamed into place) as soon as its batch is done, and
// a journal records each input finished (see Options.Journal): a run
// that fails, is cancelled or is killed keeps the outputs it finished,
// never a partial file, and Options.Resume finishes the rest. With
// Options.Atomic the outputs are staged and appear only when the whole
// run succeeds. An input that cannot be read or decoded stops the run,
// naming the file, or with on_error: skip is skipped and reported in the
// summary.
//
// The workers (Options.Workers) share each batch's samples, and up to
// Options.Prefetch batches are in flight; batches are still finished
// (written, counted, reported to Progress) in order, and which inputs
// are skipped or which one stops the run does not depend on the number
// of workers.
func (p *Pipeline) Run(ctx context.Context) (sum *Summary, err error) {
	if p.opts.Memory {
		return nil, fmt.Errorf("pipeline %s: %w: compiled with Options.Memory: run it with Stream", p.spec.file, ErrInvalid)
	}
	if p.opts.Tensors {
		return nil, fmt.Errorf("pipeline %s: %w: compiled with Options.Tensors: iterate over Batches", p.spec.file, ErrInvalid)
	}
	p.mu.Lock()
	p.start = time.Now()
	clear(p.stats)
	p.spans, p.batches = nil, nil
	p.mu.Unlock()
	sum = &Summary{Pipeline: p.graph.Name(), File: p.spec.file, Workers: p.opts.Workers, BatchSize: p.spec.batchSize, Fused: !p.opts.NoFuse}
	if p.opts.Shard.Count > 1 {
		sum.Shard = p.opts.Shard.String()
	}
	n := len(p.files[0])
	if n == 0 { // a shard whose share is empty
		p.log.Info("no inputs in this shard", "shard", p.opts.Shard.String())
		return p.summarize(sum), nil
	}
	out, done, err := p.newSink(sum)
	if err != nil {
		return p.summarize(sum), err
	}
	defer func() {
		written, ferr := out.finish(err == nil)
		if err == nil {
			sum.Outputs, err = written, ferr
		} else if ferr != nil {
			err = errors.Join(err, ferr)
		}
	}()
	todo := make([]int, 0, n)
	for i := range n {
		if len(done) == 0 || !done[p.inputKey(i)] { // keys only to resume
			todo = append(todo, i)
		}
	}
	sum.Resumed = n - len(todo)
	if len(todo) == 0 {
		return p.summarize(sum), nil
	}
	nbatches := (len(todo) + p.spec.batchSize - 1) / p.spec.batchSize
	e := p.startEngine(ctx, todo)
	defer e.stop()
	for b := range nbatches {
		var bt *batch
		select {
		case bt = <-e.done[b%len(e.done)]:
		case <-ctx.Done():
			return p.summarize(sum), ctx.Err()
		}
		err := p.finish(bt, out, sum)
		if err == nil {
			bt.recycle() // written: nothing reads them any more
			p.handBack(bt)
		}
		e.release()
		if err != nil {
			return p.summarize(sum), err
		}
		p.mu.Lock()
		p.batches = append(p.batches, batchSpan{bt.start, time.Since(bt.start), len(bt.idx)})
		p.mu.Unlock()
		sum.Batches++
		if p.opts.Progress != nil {
			p.opts.Progress(Progress{Batch: sum.Batches, Batches: nbatches, Images: sum.Images, Skipped: len(sum.Skipped)})
		}
	}
	if err := ctx.Err(); err != nil {
		return p.summarize(sum), err
	}
	if sum.Images == 0 && sum.Resumed == 0 {
		if len(sum.Skipped) == 1 {
			return p.summarize(sum), fmt.Errorf("%w: the one input was skipped", ErrNothing)
		}
		return p.summarize(sum), fmt.Errorf("%w: all %d inputs were skipped", ErrNothing, len(sum.Skipped))
	}
	return p.summarize(sum), nil
}

// inputKey names sample i by its files, as the journal does.
func (p *Pipeline) inputKey(i int) string { return strings.Join(p.inputFiles(i), "\n") }

// inputFiles returns sample i's file of each input.
func (p *Pipeline) inputFiles(i int) []string {
	files := make([]string, len(p.files))
	for k, fs := range p.files {
		files[k] = fs[i]
	}
	return files
}

// A batch is one batch of a run on its way through the engine.
type batch struct {
	idx    []int // its samples, by input index
	start  time.Time
	kept   []int              // the samples read, in order
	outs   [][]*tensor.Tensor // per kept sample, its outputs; nil if it failed
	chunks sync.WaitGroup

	mu      sync.Mutex    // the chunks of one batch may finish at once
	failed  []sampleError // the samples that could not be read or run
	results []chunkResult // the outputs of the chunks that ran
	read    [][]byte      // the buffers its files were read into
}

// A chunkResult is what a worker's graph returned for a chunk.
type chunkResult struct {
	g    *graph.Graph
	outs []*tensor.Batch
}

// recycle hands the outputs of b's chunks back to the graphs that made
// them, once they are written: the next batches reuse their memory.
func (b *batch) recycle() {
	for _, r := range b.results {
		r.g.Recycle(r.outs)
	}
	b.results = nil
}

// A sampleError is why sample i failed.
type sampleError struct {
	i   int
	err error
}

// A chunk is a worker's share of a batch: the samples kept[lo:hi].
type chunk struct {
	b      *batch
	lo, hi int
	inputs []*tensor.Batch
}

// An engine runs batches on the pipeline's workers: a reader reads the
// files of batch after batch and cuts each into one chunk per worker;
// the workers run chunks on their graphs; a batch whose chunks are done
// is handed to Run on done, which finishes batches in order.
type engine struct {
	cancel context.CancelFunc
	slots  chan struct{} // a token per batch in flight
	done   []chan *batch // batch k on done[k % Prefetch]
	total  chan int      // how many batches there were, once the source ends
	n      int           // what total said; -1 until it did
	wg     sync.WaitGroup
}

// startEngine starts reading and running the samples todo, in batches.
func (p *Pipeline) startEngine(ctx context.Context, todo []int) *engine {
	return p.startSource(ctx, func(k int) (*batch, []*tensor.Batch, bool) {
		lo := k * p.spec.batchSize
		if lo >= len(todo) {
			return nil, nil, false
		}
		b := &batch{start: time.Now(), idx: todo[lo:min(lo+p.spec.batchSize, len(todo))]}
		return b, p.read(b), true
	})
}

// startSource starts running the batches next gives, k = 0, 1, …: a
// batch with its samples kept and their inputs, until it says there are
// no more; then the engine's total says how many there were.
func (p *Pipeline) startSource(ctx context.Context, next func(k int) (*batch, []*tensor.Batch, bool)) *engine {
	ctx, cancel := context.WithCancel(ctx)
	e := &engine{cancel: cancel, slots: make(chan struct{}, p.opts.Prefetch), total: make(chan int, 1), n: -1}
	for range p.opts.Prefetch {
		e.done = append(e.done, make(chan *batch, 1))
	}
	work := make(chan chunk)
	for _, g := range p.graphs {
		e.wg.Go(func() {
			for c := range work {
				p.runChunk(ctx, g, c)
				c.b.chunks.Done()
			}
		})
	}
	e.wg.Go(func() {
		defer close(work)
		for k := 0; ; k++ {
			select {
			case e.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			b, inputs, ok := next(k)
			if !ok {
				e.total <- k
				return
			}
			// One chunk per worker, as even as can be; a batch with fewer
			// samples than workers uses fewer.
			cut := min(len(p.graphs), len(b.kept))
			b.outs = make([][]*tensor.Tensor, len(b.kept))
			b.chunks.Add(cut)
			for c := range cut {
				lo, hi := c*len(b.kept)/cut, (c+1)*len(b.kept)/cut
				select {
				case work <- chunk{b: b, lo: lo, hi: hi, inputs: slice(inputs, lo, hi)}:
				case <-ctx.Done():
					b.chunks.Add(c - cut) // the chunks never sent
					return
				}
			}
			e.wg.Go(func() {
				b.chunks.Wait()
				select {
				case e.done[k%len(e.done)] <- b:
				case <-ctx.Done():
				}
			})
		}
	})
	return e
}

// next returns batch k once its chunks are done, or false once the
// source said there were k batches. Only the goroutine that finishes
// batches calls it.
func (e *engine) next(ctx context.Context, k int) (*batch, bool, error) {
	for {
		if e.n >= 0 && k >= e.n {
			return nil, false, nil
		}
		select {
		case b := <-e.done[k%len(e.done)]:
			return b, true, nil
		case e.n = <-e.total:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// release frees the slot of a batch Run has finished.
func (e *engine) release() { <-e.slots }

// stop cancels what is left of the run and waits for every goroutine.
func (e *engine) stop() {
	e.cancel()
	e.wg.Wait()
}

// slice returns samples lo to hi of each of batches.
func slice(batches []*tensor.Batch, lo, hi int) []*tensor.Batch {
	out := make([]*tensor.Batch, len(batches))
	for k, b := range batches {
		// The samples are valid, as the whole batch's were.
		out[k], _ = tensor.NewBatch(b.Samples()[lo:hi]...)
	}
	return out
}

// runChunk runs a chunk on a worker's graph g. A chunk that fails is run
// again sample by sample, to name the input at fault: its failure goes
// into the batch's failed list, the other samples' outputs into outs.
func (p *Pipeline) runChunk(ctx context.Context, g *graph.Graph, c chunk) {
	outs, err := g.Execute(ctx, c.inputs...)
	if err == nil {
		for j := c.lo; j < c.hi; j++ {
			c.b.outs[j] = sampleOf(outs, j-c.lo)
		}
		c.b.mu.Lock()
		c.b.results = append(c.b.results, chunkResult{g, outs})
		c.b.mu.Unlock()
		return
	}
	if c.hi-c.lo == 1 || ctx.Err() != nil {
		c.b.setFailed(c.b.kept[c.lo], err)
		return
	}
	for j := c.lo; j < c.hi; j++ {
		p.runChunk(ctx, g, chunk{b: c.b, lo: j, hi: j + 1, inputs: slice(c.inputs, j-c.lo, j-c.lo+1)})
	}
}

// sampleOf returns sample j of each of outs.
func sampleOf(outs []*tensor.Batch, j int) []*tensor.Tensor {
	s := make([]*tensor.Tensor, len(outs))
	for k, o := range outs {
		s[k] = o.Sample(j)
	}
	return s
}

// setFailed records that sample i failed with err.
func (b *batch) setFailed(i int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed = append(b.failed, sampleError{i, err})
}

// finish writes the outputs of a batch whose chunks are done, and stops
// the run or skips inputs as on_error says for the samples that failed,
// in input order.
func (p *Pipeline) finish(b *batch, out sink, sum *Summary) error {
	slices.SortStableFunc(b.failed, func(x, y sampleError) int { return cmp.Compare(x.i, y.i) })
	for _, f := range b.failed {
		if err := p.fileFailed(f.i, f.err, out, sum); err != nil {
			return err
		}
	}
	for j, i := range b.kept {
		if b.outs[j] == nil {
			continue // failed
		}
		data := make([][]byte, len(p.outputs))
		for k := range p.outputs {
			var err error
			if data[k], err = b.outs[j][k].Bytes(); err != nil {
				return err
			}
		}
		if err := out.put(i, data); err != nil {
			return err
		}
		sum.Images++
	}
	return out.batchDone()
}

// fileFailed stops the run with err, naming sample i's files, or skips
// the sample under on_error: skip; the journal records which.
func (p *Pipeline) fileFailed(i int, err error, out sink, sum *Summary) error {
	files := strings.Join(p.inputFiles(i), ", ")
	if p.spec.onError != onErrorSkip {
		return errors.Join(fmt.Errorf("input %s: %w (on_error: skip would skip it)", files, err), out.failed(i, "failed", err))
	}
	p.log.Warn("skipping input", "file", files, "err", err)
	sum.Skipped = append(sum.Skipped, Skipped{File: files, Error: err.Error()})
	return out.failed(i, "skipped", err)
}

// read reads the files of b's samples into one batch per input: 1-D
// uint8 samples of the files' bytes. It records the samples read in
// b.kept, and those whose files cannot be read in b.failed.
func (p *Pipeline) read(b *batch) []*tensor.Batch {
	samples := make([][]*tensor.Tensor, len(p.files))
next:
	for _, i := range b.idx {
		row := make([]*tensor.Tensor, len(p.files))
		for k, fs := range p.files {
			data, err := p.readFile(fs[i])
			if data != nil {
				b.read = append(b.read, data)
			}
			if err == nil && len(data) == 0 {
				err = errors.New("empty file")
			}
			var t *tensor.Tensor
			if err == nil {
				t, err = tensor.FromSlice(data, int64(len(data)))
			}
			if err != nil {
				b.setFailed(i, err)
				continue next
			}
			row[k] = t
		}
		for k := range row {
			samples[k] = append(samples[k], row[k])
		}
		b.kept = append(b.kept, i)
	}
	if len(b.kept) == 0 {
		return nil
	}
	batches := make([]*tensor.Batch, len(samples))
	for k, s := range samples {
		batches[k], _ = tensor.NewBatch(s...) // 1-D uint8 samples, at least one
	}
	return batches
}

// readFile reads the file at path into a buffer the pipeline handed back
// before, where one is large enough, so that a run's steady state
// allocates no memory for the files it reads (at 1920x1080, the files
// are most of what a run with native codecs allocates). The buffer
// returned, even on error, is the caller's until handBack.
func (p *Pipeline) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < math.MaxInt32 {
		size = int(fi.Size())
	}
	buf := p.takeBuffer(size + 1) // one more, to see the end without growing, as os.ReadFile does
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) { // the file grew
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// takeBuffer returns an empty buffer of capacity at least n: a spare one
// if there is, the smallest that fits, else a new one.
func (p *Pipeline) takeBuffer(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for k, b := range p.spare {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.spare[best])) {
			best = k
		}
	}
	if best < 0 {
		return make([]byte, 0, n)
	}
	b := p.spare[best]
	p.spare = slices.Delete(p.spare, best, best+1)
	return b[:0]
}

// handBack keeps the buffers b's files were read into for later batches,
// now that b is written and nothing reads them: as many as the batches
// in flight hold, the largest.
func (p *Pipeline) handBack(b *batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spare = append(p.spare, b.read...)
	b.read = nil
	if keep := p.opts.Prefetch * p.spec.batchSize * max(len(p.files), 1); len(p.spare) > keep {
		slices.SortFunc(p.spare, func(x, y []byte) int { return cap(y) - cap(x) })
		clear(p.spare[keep:])
		p.spare = p.spare[:keep]
	}
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

// definitionOf names what runs n: its operator, or a subgraph's
// members' operators in order.
func definitionOf(n *graph.Node) Definition {
	sub, ok := n.Definition().(*graph.Graph)
	if !ok {
		return Definition{n.Definition().Name()}
	}
	var defs Definition
	for _, m := range sub.Nodes() {
		if !m.IsInput() {
			defs = append(defs, definitionOf(m)...)
		}
	}
	if defs == nil {
		defs = Definition{}
	}
	return defs
}
