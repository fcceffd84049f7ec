package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/atomicfile"
	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/pipeline"
)

// parseInterleaved parses flags that may come before or after the
// positional arguments, which it returns; after "--" everything is
// positional.
func parseInterleaved(cmd string, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(cmd, fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// pipelineFlags are the flags run and graph share.
type pipelineFlags struct {
	plugins    listFlag
	noFuse     bool
	skipPasses listFlag
}

func (f *pipelineFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.plugins, "plugin", "a plugin file or directory to search first (repeatable)")
	fs.BoolVar(&f.noFuse, "no-fuse", false, "do not fuse chains of pointwise operators")
	fs.Var(&f.skipPasses, "skip-pass", "do not run the graph pass `NAME` (repeatable), such as codec.native-codecs.decode to decode with Go's image packages; dynop inspect OPERATOR says which pass replaces an operator")
}

// compile opens a host over the plugin files and compiles spec; the
// caller closes both. A plugin file named by --plugin that is broken is an
// error; other broken plugins on the search path are not.
func compile(ctx context.Context, spec *pipeline.Spec, f *pipelineFlags, opts pipeline.Options) (*dynop.Host, *pipeline.Pipeline, error) {
	h, err := openHost(ctx, f.plugins)
	if err != nil {
		return nil, nil, err
	}
	if len(f.plugins) > 0 {
		if err := brokenError(h.Plugins(), f.plugins); err != nil {
			return nil, nil, errors.Join(err, h.Close(ctx))
		}
	}
	opts.NoFuse = f.noFuse
	opts.SkipPasses = f.skipPasses
	p, err := pipeline.Compile(ctx, h, spec, opts)
	if err != nil {
		return nil, nil, errors.Join(pluginHint(err), h.Close(ctx))
	}
	return h, p, nil
}

// pluginHint adds, after the errors of a pipeline that names operators
// no plugin found provides (the host has said where it looked), how to
// give the CLI one: on a line of its own, for all of them.
func pluginHint(err error) error {
	if nf := (*op.NotFoundError)(nil); errors.As(err, &nf) && nf.Searched != "" {
		return fmt.Errorf("%w\nhint: --plugin PATH adds a plugin file or directory, and dynop doctor checks the search path", err)
	}
	return err
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	addSandboxFlag(fs)
	var pf pipelineFlags
	pf.register(fs)
	var ins listFlag
	fs.Var(&ins, "in", "replace an input's files: PATH (a file, directory or glob) when the pipeline has one input, or NAME=PATH (repeatable)")
	out := fs.String("out", "", "write every output into this directory")
	workers := fs.Int("workers", 0, "workers that share each batch's samples, each with its own operator instances (default GOMAXPROCS)")
	shardFlag := fs.String("shard", "", "run only shard `I/N` of the inputs (0 ≤ I < N): N runs with I = 0…N-1 run every input once")
	shards := fs.Int("shards", 0, "run shard I of `N`, I taken from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or $SLURM_ARRAY_TASK_ID (a Slurm array)")
	resume := fs.Bool("resume", false, "finish a run that stopped: skip the inputs its journal lists as done with their outputs there")
	atomic := fs.Bool("atomic", false, "write the outputs only when the whole run succeeds (no journal; cannot be resumed)")
	journal := fs.String("journal", "", "the run's journal (default .dynop-journal-NAME.jsonl in the first output's directory)")
	prefetch := fs.Int("prefetch", 0, "batches in flight at once: the next ones are read and started while one finishes (default 2)")
	trace := fs.String("trace", "", "write a Chrome trace-event JSON file (open it in ui.perfetto.dev) with a span per node execution")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	files, err := parseInterleaved("run", fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: run takes one pipeline file, got %d arguments", errUsage, len(files))
	}
	if *workers < 0 {
		return fmt.Errorf("%w: run: --workers %d: must be 0 (GOMAXPROCS) or more", errUsage, *workers)
	}
	if *prefetch < 0 {
		return fmt.Errorf("%w: run: --prefetch %d: must be 0 (2) or more", errUsage, *prefetch)
	}
	spec, err := pipeline.Load(files[0])
	if err != nil {
		return err
	}
	shard, err := shardOf(*shardFlag, *shards, os.Getenv)
	if err != nil {
		return fmt.Errorf("%w: run: %w", errUsage, err)
	}
	if *resume && *atomic {
		return fmt.Errorf("%w: run: --resume and --atomic: an atomic run keeps no journal to resume from", errUsage)
	}
	opts := pipeline.Options{OutDir: *out, Workers: *workers, Prefetch: *prefetch, Shard: shard, Resume: *resume, Atomic: *atomic, Journal: *journal,
		Trace: *trace != "", Progress: progress(stderr)}
	if len(ins) > 0 {
		if opts.Inputs, err = inputOverrides(spec, ins); err != nil {
			return err
		}
	}
	h, p, err := compile(ctx, spec, &pf, opts)
	if err != nil {
		return err
	}
	// Closing stops the plugins: a deregister that fails is a warning.
	defer closeAll(stderr, h, p)
	sum, runErr := p.Run(ctx)
	if *trace != "" {
		if err := writeTrace(*trace, p); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		for _, sk := range sum.Skipped { // every one, even when all were skipped
			fmt.Fprintf(stderr, "skipped %s: %s\n", escapeCell(sk.File), escapeCell(sk.Error))
		}
		kept := "no output written"
		if !*atomic && sum.Journal != "" {
			kept = fmt.Sprintf("the outputs of the %s done are written, and %s records them: dynop run --resume finishes the rest", english.Plural(sum.Images+sum.Resumed, "input"), sum.Journal)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %s (%w)", kept, runErr)
		}
		return fmt.Errorf("%w; %s", runErr, kept)
	}
	if *asJSON {
		return newJSONEncoder(stdout).Encode(newRunJSON(sum))
	}
	return writeSummary(stdout, sum)
}

// runJSON is the output of run --json: schema dynop.run/v2.
type runJSON struct {
	Schema string `json:"schema"`
	*pipeline.Summary
}

func newRunJSON(sum *pipeline.Summary) runJSON { return runJSON{"dynop.run/v2", sum} }

// inputOverrides reads the --in values: NAME=PATH where NAME is one of
// the pipeline's inputs, or PATH alone for a pipeline with one input. A
// path may contain "=": a value whose part before the first "=" is no
// input's name is a path if it exists as one (a file, a directory or a
// glob that matches), or if that part holds a path separator; otherwise
// it is an unknown input's name, and the error lists the inputs.
func inputOverrides(spec *pipeline.Spec, ins []string) (map[string][]string, error) {
	known := spec.Inputs()
	m := map[string][]string{}
	for _, in := range ins {
		name, path, named := strings.Cut(in, "=")
		if !named || !slices.Contains(known, name) {
			if named && !strings.ContainsRune(name, filepath.Separator) && !strings.ContainsRune(name, '/') && !pathExists(in) {
				return nil, unknownInput(spec, in, name)
			}
			if len(known) != 1 {
				return nil, fmt.Errorf("%w: run: --in %q: the pipeline has %s (%s): give NAME=PATH", errUsage, in, english.Plural(len(known), "input"), strings.Join(known, ", "))
			}
			name, path = known[0], in
		}
		if path == "" {
			return nil, fmt.Errorf("%w: run: --in %q: empty path", errUsage, in)
		}
		m[name] = append(m[name], path)
	}
	return m, nil
}

// unknownInput is the error for --in NAME=PATH (the value in) where NAME
// is none of spec's inputs: it lists them, with the closest as a
// suggestion.
func unknownInput(spec *pipeline.Spec, in, name string) error {
	known := spec.Inputs()
	hint := ""
	if near := suggest.Nearest(name, known); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return fmt.Errorf("%w: run: --in %q: %q is not an input of the pipeline%s, and no file %q exists; the pipeline's inputs: %s (give NAME=PATH, or PATH for a pipeline of one input)",
		errUsage, in, name, hint, in, strings.Join(known, ", "))
}

// pathExists reports whether a file or directory path exists, or path is
// a glob pattern that matches one.
func pathExists(path string) bool {
	if _, err := os.Lstat(path); err == nil {
		return true
	}
	matches, err := filepath.Glob(path)
	return err == nil && len(matches) > 0
}

// writeTrace writes the run's trace to path atomically, readable by all
// (0644) as the run's outputs are.
func writeTrace(path string, p *pipeline.Pipeline) error {
	var b bytes.Buffer
	if err := p.WriteTrace(&b); err != nil {
		return fmt.Errorf("--trace %s: %w", path, err)
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

func writeSummary(w io.Writer, sum *pipeline.Summary) error {
	fmt.Fprintf(w, "%s: %s in %s in %.3fs", sum.Pipeline, english.Plural(sum.Images, "image"), english.Plural(sum.Batches, "batch"), sum.Seconds)
	if sum.Seconds > 0 {
		fmt.Fprintf(w, " (%.1f images/s)", float64(sum.Images)/sum.Seconds)
	}
	fmt.Fprintf(w, " on %s", english.Plural(sum.Workers, "worker"))
	if sum.Shard != "" {
		fmt.Fprintf(w, ", shard %s of the inputs", sum.Shard)
	}
	if sum.Resumed > 0 {
		fmt.Fprintf(w, "; %s already done (resumed)", english.Plural(sum.Resumed, "input"))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tDEFINITION\tPLUGIN\t   CALLS\t      TIME\t SHARE")
	for _, n := range sum.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%8d\t%8.2fms\t%5.1f%%\n", escapeCell(n.Node), escapeCell(n.Definition.String()), escapeCell(orDash(n.Plugin)), n.Calls, n.Seconds*1e3, n.Share*100)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range sum.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", escapeCell(s.File), escapeCell(s.Error))
	}
	dirs := map[string]int{}
	var order []string
	for _, o := range sum.Outputs {
		d := filepath.Dir(o)
		if dirs[d]++; dirs[d] == 1 {
			order = append(order, d)
		}
	}
	for _, d := range order {
		fmt.Fprintf(w, "wrote %s to %s\n", english.Plural(dirs[d], "file"), escapeCell(d))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// progress reports batches on w: a bar redrawn in place on a terminal,
// a line per batch otherwise, each with what progressLine says.
func progress(w io.Writer) func(pipeline.Progress) {
	tty := isTerminal(w)
	return func(p pipeline.Progress) {
		if !tty {
			fmt.Fprintln(w, progressLine(p))
			return
		}
		const width = 30
		done := width * p.Batch / max(p.Batches, 1)
		fmt.Fprintf(w, "\r[%s%s] %s", strings.Repeat("█", done), strings.Repeat("·", width-done), progressLine(p))
		if p.Batch == p.Batches {
			fmt.Fprintln(w)
		}
	}
}

// progressLine says where a run is, every count so far: "1/2 batches,
// 4 images" after the first of two batches of four, "2/2 batches, 6
// images, 1 skipped" after the second.
func progressLine(p pipeline.Progress) string {
	s := fmt.Sprintf("%d/%s, %s", p.Batch, english.Plural(p.Batches, "batch"), english.Plural(p.Images, "image"))
	if p.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", p.Skipped)
	}
	return s
}

func graphCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	addSandboxFlag(fs)
	var pf pipelineFlags
	pf.register(fs)
	dot := fs.Bool("dot", false, "print Graphviz DOT (render with: dot -Tsvg)")
	files, err := parseInterleaved("graph", fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: graph takes one pipeline file, got %d arguments", errUsage, len(files))
	}
	spec, err := pipeline.Load(files[0])
	if err != nil {
		return err
	}
	// The graph needs no output directory; the temporary one stands in.
	// Every worker's graph is the same: one is built.
	h, p, err := compile(ctx, spec, &pf, pipeline.Options{OutDir: os.TempDir(), Workers: 1})
	if err != nil {
		return err
	}
	defer closeAll(stderr, h, p)
	if *dot {
		return p.Graph().WriteDOT(stdout)
	}
	return writeTree(stdout, p.Graph().Nodes(), "")
}

// writeTree lists nodes, one per line, with their definitions and
// inputs, subgraphs indented under their node.
func writeTree(w io.Writer, nodes []*graph.Node, indent string) error {
	for _, n := range nodes {
		if n.IsInput() {
			if _, err := fmt.Fprintf(w, "%sinput %s\n", indent, escapeCell(n.Name())); err != nil {
				return err
			}
			continue
		}
		var from []string
		for _, p := range n.Inputs() {
			from = append(from, p.String())
		}
		sub, isGraph := n.Definition().(*graph.Graph)
		what := n.Definition().Name()
		if d, ok := n.Definition().(*graph.OperatorDef); ok && d.Instance.Plugin() != "" {
			what += " (" + d.Instance.Plugin() + ")"
		} else if isGraph {
			what = "subgraph"
		}
		if _, err := fmt.Fprintf(w, "%s%s: %s <- %s\n", indent, escapeCell(n.Name()), escapeCell(what), escapeCell(strings.Join(from, ", "))); err != nil {
			return err
		}
		if isGraph {
			if err := writeTree(w, sub.Nodes(), indent+"    "); err != nil {
				return err
			}
		}
	}
	return nil
}

// shardOf returns the shard of --shard I/N, or of --shards N with the
// index from the environment (getenv): $JOB_COMPLETION_INDEX of a
// Kubernetes Indexed Job, else $SLURM_ARRAY_TASK_ID less
// $SLURM_ARRAY_TASK_MIN (0 if unset) of a Slurm array, whose
// $SLURM_ARRAY_TASK_COUNT, if set, must be N. Neither flag: all inputs.
func shardOf(flag string, count int, getenv func(string) string) (pipeline.Shard, error) {
	switch {
	case flag != "" && count != 0:
		return pipeline.Shard{}, errors.New("--shard and --shards: give one (--shard I/N, or --shards N with the index in the environment)")
	case flag != "":
		sh, err := pipeline.ParseShard(flag)
		if err != nil {
			return sh, fmt.Errorf("--shard: %w", err)
		}
		return sh, nil
	case count == 0:
		return pipeline.Shard{}, nil
	case count < 0:
		return pipeline.Shard{}, fmt.Errorf("--shards %d: want the number of shards, at least 1", count)
	}
	index, from := getenv("JOB_COMPLETION_INDEX"), "JOB_COMPLETION_INDEX"
	if index == "" {
		index, from = getenv("SLURM_ARRAY_TASK_ID"), "SLURM_ARRAY_TASK_ID"
	}
	if index == "" {
		return pipeline.Shard{}, fmt.Errorf("--shards %d: no shard index in the environment: set JOB_COMPLETION_INDEX (a Kubernetes Indexed Job sets it) or SLURM_ARRAY_TASK_ID (a Slurm array), or give --shard I/%d", count, count)
	}
	i, err := strconv.Atoi(index)
	if err != nil {
		return pipeline.Shard{}, fmt.Errorf("--shards %d: %s=%q is not a whole number", count, from, index)
	}
	if from == "SLURM_ARRAY_TASK_ID" {
		if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
			first, err := strconv.Atoi(m)
			if err != nil {
				return pipeline.Shard{}, fmt.Errorf("--shards %d: SLURM_ARRAY_TASK_MIN=%q is not a whole number", count, m)
			}
			i -= first
		}
		if c := getenv("SLURM_ARRAY_TASK_COUNT"); c != "" && c != strconv.Itoa(count) {
			return pipeline.Shard{}, fmt.Errorf("--shards %d: the Slurm array has SLURM_ARRAY_TASK_COUNT=%s tasks: give --shards %s", count, c, c)
		}
	}
	sh := pipeline.Shard{Index: i, Count: count}
	if err := sh.Validate(); err != nil {
		return sh, fmt.Errorf("--shards %d with %s=%s: %w", count, from, index, err)
	}
	return sh, nil
}
