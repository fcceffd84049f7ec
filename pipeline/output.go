package pipeline

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// staging holds a run's output files in a hidden directory inside each
// output directory until the run succeeds.
type staging struct {
	outputs []outputPlan
	dirs    map[string]string // output dir -> its staging dir
	files   []stagedFile
}

type stagedFile struct{ staged, final string }

func newStaging(outputs []outputPlan) (*staging, error) {
	s := &staging{outputs: outputs, dirs: map[string]string{}}
	for _, o := range outputs {
		if _, ok := s.dirs[o.dir]; ok {
			continue
		}
		dir, err := os.MkdirTemp(o.dir, ".dynop-run-")
		if err != nil {
			return nil, errors.Join(fmt.Errorf("output %q: %w: %w", o.name, ErrOutput, err), s.discard())
		}
		s.dirs[o.dir] = dir
	}
	return s, nil
}

// write stages the file name of output k.
func (s *staging) write(k int, name string, data []byte) error {
	o := s.outputs[k]
	staged := filepath.Join(s.dirs[o.dir], name)
	if err := os.WriteFile(staged, data, 0o644); err != nil {
		return fmt.Errorf("output %q: %w: %w", o.name, ErrOutput, err)
	}
	s.files = append(s.files, stagedFile{staged, filepath.Join(o.dir, name)})
	return nil
}

// commit moves the staged files into place and removes the staging
// directories; it returns the final paths. It is all or nothing: a file
// it would replace is moved aside first (into the staging directory),
// and if a rename fails, the files already moved are moved back and the
// replaced ones restored.
func (s *staging) commit() ([]string, error) {
	for _, f := range s.files {
		if fi, err := os.Lstat(f.final); err == nil && !fi.Mode().IsRegular() {
			return nil, errors.Join(fmt.Errorf("%w: %s exists and is not a regular file", ErrOutput, f.final), s.discard())
		}
	}
	type moved struct {
		f     stagedFile
		aside string // where the file it replaced went, or ""
	}
	var done []moved
	undo := func(cause error) error {
		errs := []error{fmt.Errorf("%w: %w", ErrOutput, cause)}
		for i := len(done) - 1; i >= 0; i-- {
			m := done[i]
			errs = append(errs, os.Rename(m.f.final, m.f.staged))
			if m.aside != "" {
				errs = append(errs, os.Rename(m.aside, m.f.final))
			}
		}
		return errors.Join(append(errs, s.discard())...)
	}
	for k, f := range s.files {
		m := moved{f: f}
		if _, err := os.Lstat(f.final); err == nil {
			m.aside = fmt.Sprintf("%s.replaced-%d", f.staged, k)
			if err := os.Rename(f.final, m.aside); err != nil {
				return nil, undo(err)
			}
		}
		if err := os.Rename(f.staged, f.final); err != nil {
			if m.aside != "" {
				err = errors.Join(err, os.Rename(m.aside, f.final))
			}
			return nil, undo(err)
		}
		done = append(done, m)
	}
	var paths []string
	for _, m := range done {
		paths = append(paths, m.f.final)
	}
	return paths, s.discard()
}

// discard removes the staging directories and what is left in them.
func (s *staging) discard() error {
	var errs []error
	for _, dir := range s.dirs {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}

// Summary is what a run did.
type Summary struct {
	Pipeline  string     `json:"pipeline"`
	File      string     `json:"file"`
	BatchSize int        `json:"batch_size"`
	Workers   int        `json:"workers"`
	Shard     string     `json:"shard,omitempty"` // "I/N" of a sharded run
	Fused     bool       `json:"fused"`
	Batches   int        `json:"batches"`
	Resumed   int        `json:"resumed,omitempty"` // inputs a journal showed done, not run again
	Journal   string     `json:"journal,omitempty"` // the run's journal; none with Options.Atomic
	Images    int        `json:"images"`
	Skipped   []Skipped  `json:"skipped,omitempty"`
	Outputs   []string   `json:"outputs,omitempty"`
	Seconds   float64    `json:"seconds"`
	Nodes     []NodeStat `json:"nodes"`
}

// Skipped is an input that on_error: skip left out.
type Skipped struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// NodeStat is the time one top-level node took over a run; a fused or
// grouped node counts as one.
type NodeStat struct {
	Node       string     `json:"node"`
	Definition Definition `json:"definition"`
	Plugin     string     `json:"plugin,omitempty"`
	Calls      int        `json:"calls"`
	Seconds    float64    `json:"seconds"`
	// Share is the node's part of the time all nodes took, 0 to 1.
	Share float64 `json:"share"`
}

// Definition is what ran a node: the names of its operators, one for an
// operator's node, the members in order for a fused or grouped node.
type Definition []string

// String joins the operators' names with "+", as fused nodes' names
// join their members': "image.Adjust+image.Gamma".
func (d Definition) String() string { return strings.Join(d, "+") }

func (p *Pipeline) summarize(sum *Summary) *Summary {
	sum.Seconds = time.Since(p.start).Seconds()
	p.mu.Lock()
	defer p.mu.Unlock()
	var total time.Duration
	for _, st := range p.stats {
		total += st.time
	}
	sum.Nodes = sum.Nodes[:0]
	for name, st := range p.stats {
		ns := NodeStat{Node: name, Definition: definitionOf(st.node), Plugin: pluginOf(st.node), Calls: st.calls, Seconds: st.time.Seconds()}
		if total > 0 {
			ns.Share = float64(st.time) / float64(total)
		}
		sum.Nodes = append(sum.Nodes, ns)
	}
	slices.SortFunc(sum.Nodes, func(a, b NodeStat) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Node, b.Node))
	})
	return sum
}

// WriteTrace writes the spans of the last run as Chrome trace-event JSON,
// which Perfetto (ui.perfetto.dev) and chrome://tracing open: one
// complete event per node execution on the row of the worker that ran
// it, and one per batch on the first row. Compile with Options.Trace.
func (p *Pipeline) WriteTrace(w io.Writer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	type event struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat,omitempty"`
		Ph   string         `json:"ph"`
		TS   float64        `json:"ts"`
		Dur  float64        `json:"dur,omitempty"`
		PID  int            `json:"pid"`
		TID  int            `json:"tid"`
		Args map[string]any `json:"args,omitempty"`
	}
	us := func(t time.Time) float64 { return float64(t.Sub(p.start).Nanoseconds()) / 1e3 }
	events := []event{
		{Name: "process_name", Ph: "M", PID: 1, Args: map[string]any{"name": "dynop run " + p.graph.Name()}},
		{Name: "thread_name", Ph: "M", PID: 1, TID: 0, Args: map[string]any{"name": "batches"}},
	}
	workers := map[int]bool{}
	for i, b := range p.batches {
		events = append(events, event{Name: fmt.Sprintf("batch %d", i+1), Cat: "batch", Ph: "X", TS: us(b.start),
			Dur: float64(b.dur.Nanoseconds()) / 1e3, PID: 1, Args: map[string]any{"images": b.n}})
	}
	for _, s := range p.spans {
		args := map[string]any{"definition": definitionOf(s.Node).String()}
		if pl := pluginOf(s.Node); pl != "" {
			args["plugin"] = pl
		}
		if s.Err != nil {
			args["error"] = s.Err.Error()
		}
		workers[s.Worker] = true
		events = append(events, event{Name: s.Node.Path(), Cat: "node", Ph: "X", TS: us(s.Start),
			Dur: float64(s.Duration.Nanoseconds()) / 1e3, PID: 1, TID: s.Worker + 1, Args: args})
	}
	for wk := range workers {
		events = append(events, event{Name: "thread_name", Ph: "M", PID: 1, TID: wk + 1, Args: map[string]any{"name": fmt.Sprintf("worker %d", wk)}})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
}

// A sink takes a run's outputs.
type sink interface {
	// put writes the outputs of sample i, data[k] for output k.
	put(i int, data [][]byte) error
	// failed records that sample i was skipped or stopped the run.
	failed(i int, status string, err error) error
	// batchDone makes what a batch added durable.
	batchDone() error
	// finish ends the run, ok if it succeeded, and returns the files it
	// wrote.
	finish(ok bool) ([]string, error)
}

// newSink returns the sink of a run: a stream of atomic writes with a
// journal, or with Options.Atomic the staging directories. It returns
// the inputs a resumed run finds done, by inputKey.
func (p *Pipeline) newSink(sum *Summary) (sink, map[string]bool, error) {
	if p.opts.Atomic {
		st, err := newStaging(p.outputs)
		if err != nil {
			return nil, nil, err
		}
		return &stagedSink{p: p, st: st}, nil, nil
	}
	j, done, err := p.openJournal(p.opts.Resume)
	if err != nil {
		return nil, nil, err
	}
	sum.Journal = j.path
	p.removeTemporaries()
	return &streamSink{p: p, j: j}, done, nil
}

// removeTemporaries removes the temporary files of outputs that a run
// killed while writing them left (".NAME.tmp…" beside NAME). It lists
// each output directory once, and looks up the outputs' names only if a
// file there looks like one.
func (p *Pipeline) removeTemporaries() {
	var names map[string]bool // dir/NAME of every output, made on first need
	seen := map[string]bool{}
	for _, o := range p.outputs {
		if seen[o.dir] {
			continue
		}
		seen[o.dir] = true
		entries, err := os.ReadDir(o.dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), "."), ".tmp")
			if !ok || !strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
				continue
			}
			if names == nil {
				names = map[string]bool{}
				for _, o := range p.outputs {
					for _, base := range p.bases {
						names[filepath.Join(o.dir, base+o.suffix+o.ext)] = true
					}
				}
			}
			if names[filepath.Join(o.dir, name)] {
				if err := os.Remove(filepath.Join(o.dir, e.Name())); err == nil {
					p.log.Info("removed a temporary file a killed run left", "file", filepath.Join(o.dir, e.Name()))
				}
			}
		}
	}
}

// streamSink writes each output into place as soon as its batch is
// done, and journals it. A batch's files are written unsynced and made
// durable together when the batch is done, before the journal records
// them (one flush per batch rather than one per file: the main job's two
// workers ran 13% faster); a file the journal lists as done is on disk.
type streamSink struct {
	p       *Pipeline
	j       *journal
	written []string
	batch   []string       // the files of the batch under way
	pending []journalEntry // its journal entries, recorded once its files are durable
}

func (s *streamSink) put(i int, data [][]byte) error {
	paths := make([]string, len(s.p.outputs))
	for k, o := range s.p.outputs {
		paths[k] = filepath.Join(o.dir, s.p.bases[i]+o.suffix+o.ext)
		if err := atomicfile.WriteUnsynced(paths[k], data[k], 0o644); err != nil {
			// What the batch wrote before stays done: journal it first.
			return errors.Join(fmt.Errorf("output %q: %w: %w (the journal %s says where to resume: run again with --resume)", o.name, ErrOutput, err, s.j.path), s.batchDone())
		}
		s.written = append(s.written, paths[k])
		s.batch = append(s.batch, paths[k])
	}
	s.pending = append(s.pending, journalEntry{Input: s.p.inputFiles(i), Outputs: paths, Status: "done"})
	return nil
}

func (s *streamSink) failed(i int, status string, err error) error {
	s.pending = append(s.pending, journalEntry{Input: s.p.inputFiles(i), Status: status, Error: err.Error()})
	return nil
}

func (s *streamSink) batchDone() error {
	if err := atomicfile.SyncAll(s.batch); err != nil {
		return fmt.Errorf("%w: %w (the journal %s says where to resume: run again with --resume)", ErrOutput, err, s.j.path)
	}
	for _, e := range s.pending {
		if err := s.j.add(e); err != nil {
			return err
		}
	}
	s.batch, s.pending = s.batch[:0], s.pending[:0]
	return s.j.sync()
}

func (s *streamSink) finish(bool) ([]string, error) { return s.written, s.j.close() }

// stagedSink stages the outputs and moves them into place when the run
// succeeds.
type stagedSink struct {
	p  *Pipeline
	st *staging
}

func (s *stagedSink) put(i int, data [][]byte) error {
	for k, o := range s.p.outputs {
		if err := s.st.write(k, s.p.bases[i]+o.suffix+o.ext, data[k]); err != nil {
			return err
		}
	}
	return nil
}

func (s *stagedSink) failed(int, string, error) error { return nil }

func (s *stagedSink) batchDone() error { return nil }

func (s *stagedSink) finish(ok bool) ([]string, error) {
	if !ok {
		return nil, s.st.discard()
	}
	return s.st.commit()
}
