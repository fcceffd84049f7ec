package pipeline

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrJournal: a journal cannot be resumed from: it belongs to another
// pipeline or shard, or it cannot be read.
var ErrJournal = errors.New("cannot resume from the journal")

// journalFormat names the journal's format in its first line.
const journalFormat = "dynop.run.journal/v1"

// A journalHeader is a journal's first line: what run it records.
type journalHeader struct {
	Format   string    `json:"journal"`
	Pipeline string    `json:"pipeline"` // the pipeline file, absolute
	SHA256   string    `json:"sha256"`   // of the pipeline file's bytes
	Shard    string    `json:"shard,omitempty"`
	Started  time.Time `json:"started"`
}

// A journalEntry is what became of one input: "done" with the outputs
// written, "skipped" (on_error: skip) or "failed" (the run stopped), with
// the error.
type journalEntry struct {
	Input   []string `json:"input"` // its file, one per pipeline input
	Outputs []string `json:"outputs,omitempty"`
	Status  string   `json:"status"`
	Error   string   `json:"error,omitempty"`
}

// A journal records a run, a line per input finished, so that a run
// killed at any moment can be resumed: an input counts as done only if
// its line says so and every output it lists is there. Outputs are
// written (atomically) before the line that lists them, so a line never
// lists a file that is not complete.
type journal struct {
	path string
	f    *os.File
	w    *bufio.Writer
}

// journalPath is where the run of p keeps its journal when Options does
// not say: in the first output's directory, named after the pipeline and
// the shard.
func (p *Pipeline) journalPath() string {
	if p.opts.Journal != "" {
		return p.opts.Journal
	}
	name := ".dynop-journal-" + sanitize(p.graph.Name())
	if p.opts.Shard.Count > 1 {
		name += fmt.Sprintf("-shard-%d-of-%d", p.opts.Shard.Index, p.opts.Shard.Count)
	}
	return filepath.Join(p.outputs[0].dir, name+".jsonl")
}

// sanitize keeps letters, digits, '-', '_' and '.' of a name for a file
// name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// header returns the header of a run of p now.
func (p *Pipeline) header() journalHeader {
	h := journalHeader{Format: journalFormat, Pipeline: p.spec.file, Started: time.Now().UTC()}
	if abs, err := filepath.Abs(p.spec.file); err == nil {
		h.Pipeline = abs
	}
	if data, err := os.ReadFile(h.Pipeline); err == nil {
		sum := sha256.Sum256(data)
		h.SHA256 = hex.EncodeToString(sum[:])
	}
	if p.opts.Shard.Count > 1 {
		h.Shard = p.opts.Shard.String()
	}
	return h
}

// openJournal starts the journal of a run: a new one, or, when resume is
// set and there is one, the one there after checking that it records
// this pipeline and shard; it returns the inputs it records as done
// whose outputs are all there, by their files joined with "\n".
func (p *Pipeline) openJournal(resume bool) (*journal, map[string]bool, error) {
	path := p.journalPath()
	want := p.header()
	done := map[string]bool{}
	if resume {
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.log.Info("no journal to resume from: starting from the first input", "journal", path)
			resume = false
		case err != nil:
			return nil, nil, fmt.Errorf("%w %s: %w", ErrJournal, path, err)
		default:
			if done, err = readJournal(path, data, want); err != nil {
				return nil, nil, err
			}
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !resume {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: journal: %w", ErrOutput, err)
	}
	j := &journal{path: path, f: f, w: bufio.NewWriter(f)}
	if !resume {
		if err := j.add(want); err != nil {
			return nil, nil, errors.Join(err, f.Close())
		}
		if err := j.sync(); err != nil {
			return nil, nil, errors.Join(err, f.Close())
		}
	}
	return j, done, nil
}

// readJournal reads the journal at path (its bytes data), checks that
// its header is want's pipeline and shard, and returns the inputs it
// records as done whose outputs all exist. A last line cut short (the
// run was killed while writing it) is ignored.
func readJournal(path string, data []byte, want journalHeader) (map[string]bool, error) {
	lines := bytes.Split(data, []byte("\n"))
	var h journalHeader
	if err := json.Unmarshal(lines[0], &h); err != nil || h.Format != journalFormat {
		return nil, fmt.Errorf("%w %s: it is not a dynop run journal (its first line is not a %s header)", ErrJournal, path, journalFormat)
	}
	switch {
	case h.Pipeline != want.Pipeline:
		return nil, fmt.Errorf("%w %s: it records pipeline %s, and this run is of %s: run without --resume to start over", ErrJournal, path, h.Pipeline, want.Pipeline)
	case h.SHA256 != want.SHA256:
		return nil, fmt.Errorf("%w %s: it records pipeline %s as it was (sha256 %s), and the file has changed since (sha256 %s): run without --resume to start over", ErrJournal, path, h.Pipeline, h.SHA256, want.SHA256)
	case h.Shard != want.Shard:
		return nil, fmt.Errorf("%w %s: it records shard %q of the inputs, and this run is of shard %q", ErrJournal, path, h.Shard, want.Shard)
	}
	done := map[string]bool{}
	for n, line := range lines[1:] {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e journalEntry
		if err := json.Unmarshal(line, &e); err != nil {
			if n == len(lines)-2 {
				break // the last line, cut short
			}
			return nil, fmt.Errorf("%w %s: line %d: %v", ErrJournal, path, n+2, err)
		}
		key := strings.Join(e.Input, "\n")
		if e.Status != "done" {
			delete(done, key)
			continue
		}
		complete := true
		for _, o := range e.Outputs {
			if fi, err := os.Stat(o); err != nil || !fi.Mode().IsRegular() {
				complete = false
			}
		}
		done[key] = complete
	}
	for k, ok := range done {
		if !ok {
			delete(done, k)
		}
	}
	return done, nil
}

// add writes v as a line.
func (j *journal) add(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := j.w.Write(line); err != nil {
		return fmt.Errorf("%w: journal %s: %w", ErrOutput, j.path, err)
	}
	return nil
}

// sync writes what was added to the disk.
func (j *journal) sync() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("%w: journal %s: %w", ErrOutput, j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("%w: journal %s: %w", ErrOutput, j.path, err)
	}
	return nil
}

// close syncs and closes the journal.
func (j *journal) close() error {
	return errors.Join(j.sync(), j.f.Close())
}
