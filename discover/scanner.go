package discover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// The environment of a scanner child process.
const (
	envScanner = "DYNOP_SCANNER"        // the protocol version, "1"
	envFormat  = "DYNOP_SCANNER_FORMAT" // the loader to inspect the file with
	envFile    = "DYNOP_SCANNER_FILE"   // the plugin file
	resultFD   = 3                      // the child writes its result here
)

// scanErrorSchema is the schema of a scanner's answer when the loader
// refused the file.
const scanErrorSchema = "dynop.scan-error/v1"

// defaultScanTimeout is how long a scanner child may take to report a
// plugin before it is killed and the plugin recorded as broken.
const defaultScanTimeout = 10 * time.Second

// Format is a plugin file format that a host can load: a loader's name,
// the magic its files start with, and how to read a file's Info.
type Format struct {
	// Name names the loader ("native", "wasm").
	Name string
	// Magic is the prefix of every file of the format.
	Magic string
	// Check looks at the file without running any of its code (an ELF
	// header, an import section) and says why it cannot be loaded here.
	// Optional; it runs in the host, before any scanner.
	Check func(path string) error
	// Inspect reads the plugin in the file, running its code if it must,
	// and returns its Info and what else the loader will need to load it
	// (JSON, kept in the manifest under "loader"). It runs in a scanner
	// child process unless Sandboxed.
	Inspect func(ctx context.Context, path string) (schema.Plugin, json.RawMessage, error)
	// Bundled lists the files the plugin in the file at path ships and
	// loads with it (shared libraries it links against from its own
	// directory), relative to the file's directory, in the order they
	// load. It reads the file without running any of its code. Optional;
	// it runs wherever Inspect does, and the manifest lists the files
	// with their digests ([Manifest.Bundled]).
	Bundled func(path string) ([]string, error)
	// Sandboxed says Inspect runs the plugin's code in a sandbox that
	// cannot harm the host (a WebAssembly runtime), so it runs in the
	// host's process.
	Sandboxed bool
	// Errors are the sentinel errors Inspect's errors may wrap, by name,
	// so that an error from a scanner child or the cache still wraps them.
	Errors map[string]error
}

// IsScanner reports whether this process was started as a scanner child
// (the environment variable DYNOP_SCANNER is "1"), whose main must call
// [ServeScanner] (dynop.ServeScanner) before anything else.
func IsScanner() bool {
	return os.Getenv(envScanner) == "1"
}

// serving is what a scanner child writes on descriptor 3 as soon as it
// serves, before it inspects the file: a host that reads nothing there
// knows the program never served (its main does not call ServeScanner),
// rather than that the plugin hangs or exits. It is white space before the
// answer, which JSON ignores.
const serving = "\n"

// ServeScanner is the child's side of the scanner protocol: if this
// process is a scanner child ([IsScanner]), it inspects the file it was
// given with the format of formats that the host named, writes the
// manifest (or the loader's error) to file descriptor 3 and exits;
// otherwise it returns at once. A host names a format by its Name; if
// formats has none of that name, the answer is an error that says so
// (the program does not import the loader).
//
// A host starts a scanner by executing itself ([Options.Scanner] may name
// another program) with the environment variables DYNOP_SCANNER=1,
// DYNOP_SCANNER_FORMAT and DYNOP_SCANNER_FILE. The child writes a newline
// on descriptor 3 as soon as it serves, then the answer. Programs call
// dynop.ServeScanner, which calls this with the registered loaders'
// formats, first in main, as a program serving hashicorp/go-plugin
// plugins calls plugin.Serve: nothing serves or exits from an init. A
// program started as a scanner whose main does not call it runs its
// normal main instead, and the host reports that it exited (or hung)
// without answering. Anything the plugin prints goes to the child's
// stdout and stderr, which the host keeps for its error message; only
// descriptor 3 carries the answer.
func ServeScanner(formats []Format) {
	if !IsScanner() {
		return
	}
	out := os.NewFile(resultFD, "scanner-result")
	if out == nil {
		fmt.Fprintf(os.Stderr, "dynop scanner: no descriptor %d to answer on\n", resultFD)
		os.Exit(3)
	}
	if _, err := io.WriteString(out, serving); err != nil {
		fmt.Fprintf(os.Stderr, "dynop scanner: write result: %v\n", err)
		os.Exit(3)
	}
	var data []byte
	if i := slices.IndexFunc(formats, func(f Format) bool { return f.Name == os.Getenv(envFormat) }); i >= 0 {
		m, err := inspect(context.Background(), formats[i], os.Getenv(envFile))
		data = answer(formats[i], m, err)
	} else {
		data = scannerAnswer(noLoader(os.Getenv(envFormat)))
	}
	status := 0
	if _, err := out.Write(data); err != nil {
		fmt.Fprintf(os.Stderr, "dynop scanner: write result: %v\n", err)
		status = 3
	}
	os.Exit(status)
}

// noLoader is the error of a scanner child that has no loader for the
// format the host named.
func noLoader(name string) error {
	hint := "import the package that registers it"
	if i := slices.IndexFunc(knownFormats, func(k knownFormat) bool { return k.name == name }); i >= 0 {
		hint = "import " + knownFormats[i].pkg
	}
	prog, err := os.Executable()
	if err != nil {
		prog = os.Args[0]
	}
	return fmt.Errorf("no loader %q is registered in %s: %s", name, prog, hint)
}

// answer is what a scanner child writes for the manifest m or the error
// err: the manifest, or, if there is an error or the manifest cannot be
// encoded ([Manifest.Encode]), the error, with the sentinels of f and
// this package it wraps.
func answer(f Format, m *Manifest, err error) []byte {
	var data []byte
	if err == nil {
		data, err = m.Encode()
	}
	if err != nil {
		data, _ = json.Marshal(scanError{Schema: scanErrorSchema, Error: saveError(err, sentinelsOf([]Format{f}))})
	}
	return data
}

type scanError struct {
	Schema string      `json:"schema"`
	Error  *savedError `json:"error"`
	// Scanner says the error is the scanner program's, not the plugin's
	// (it has no loader for the format): no verdict on the plugin.
	Scanner bool `json:"scanner,omitempty"`
}

// scannerAnswer is what a scanner child writes when it cannot inspect
// the file for a reason of its own, err.
func scannerAnswer(err error) []byte {
	data, _ := json.Marshal(scanError{Schema: scanErrorSchema, Error: saveError(err, nil), Scanner: true})
	return data
}

// inspect hashes the file at path and reads its Info with f.Inspect, in
// this process. Info without an ID is an error wrapping
// [schema.ErrPlugin]: every other rule of [schema.Plugin] is the host's to
// check, but a manifest needs the ID.
func inspect(ctx context.Context, f Format, path string) (*Manifest, error) {
	d, size, err := sign.HashFile(path)
	if err != nil {
		return nil, formatError(err)
	}
	info, data, err := f.Inspect(ctx, path)
	if err != nil {
		return nil, err
	}
	if info.ID == "" {
		// A manifest without an id is one no host reads: say what is wrong
		// with the plugin, rather than print what the parent must call
		// garbage.
		return nil, fmt.Errorf("%w: the plugin id is empty", schema.ErrPlugin)
	}
	if info.APIVersion.IsZero() {
		info.APIVersion = schema.APIVersion
	}
	m := &Manifest{Schema: ManifestSchema, Format: f.Name, File: filepath.Base(path), Size: size, SHA256: d, Info: info, Loader: data}
	if f.Bundled != nil {
		rels, err := f.Bundled(path)
		if err != nil {
			return nil, err
		}
		if m.Bundled, err = hashBundled(path, rels); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// scanner runs scanner child processes.
type scanner struct {
	exe     string
	timeout time.Duration
	once    sync.Once
	exeErr  error

	mu        sync.Mutex
	unserving error // why a child did not serve, if one did not: the next would not either
}

// self returns this program's path.
func self() string {
	exe, _ := os.Executable()
	return exe
}

func (s *scanner) executable() (string, error) {
	s.once.Do(func() {
		if s.exe == "" {
			s.exe, s.exeErr = os.Executable()
		}
	})
	return s.exe, s.exeErr
}

// scan reads the manifest of the plugin file path of format f in a child
// process (or here, for a sandboxed format). A child that crashes, hangs
// past the timeout, exits without answering or prints something other
// than an answer gives an error wrapping [ErrScan] that says which and
// ends with what the child printed. A child that never serves (the
// program's main does not call ServeScanner) gives an error that says so
// and is no verdict on the plugin; s starts no other child after it.
func (s *scanner) scan(ctx context.Context, f Format, path string) (*Manifest, error) {
	if f.Sandboxed {
		return inspect(ctx, f, path)
	}
	s.mu.Lock()
	err := s.unserving
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	m, err := s.run(ctx, f, path)
	var u *unservingError
	if errors.As(err, &u) {
		s.mu.Lock()
		s.unserving = err
		s.mu.Unlock()
	}
	return m, err
}

// unservingError is the error of a scanner child that never served.
type unservingError struct{ error }

func (e *unservingError) Unwrap() error { return e.error }

// run reads the manifest of the plugin file path of format f in a child
// process.
func (s *scanner) run(ctx context.Context, f Format, path string) (*Manifest, error) {
	if os.Getenv(envScanner) != "" {
		// This program was started as a scanner and runs its normal main:
		// a scanner of its own would do the same, and so on.
		return nil, noVerdict(fmt.Errorf("%w: this process was started as a scanner child (%s is set) but did not serve as one (does its main call dynop.ServeScanner() first?), so it starts no scanner of its own", ErrScan, envScanner))
	}
	exe, err := s.executable()
	if err != nil {
		return nil, noVerdict(fmt.Errorf("%w: no scanner: %v", ErrScan, err))
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	r, w, err := os.Pipe() // the answer, on the child's descriptor 3
	if err != nil {
		return nil, noVerdict(fmt.Errorf("%w: %v", ErrScan, err))
	}
	defer r.Close()
	rOut, wOut, err := os.Pipe() // what the child prints
	if err != nil {
		w.Close()
		return nil, noVerdict(fmt.Errorf("%w: %v", ErrScan, err))
	}
	defer rOut.Close()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), envScanner+"=1", envFormat+"="+f.Name, envFile+"="+path)
	if raceEnabled && exe == self() {
		cmd.Env = append(cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	// Files, not writers, so that Wait returns when the child exits,
	// whatever it left running.
	cmd.Stdout, cmd.Stderr = wOut, wOut
	cmd.ExtraFiles = []*os.File{w}
	setProcessGroup(cmd)
	err = cmd.Start()
	w.Close()
	wOut.Close()
	if err != nil {
		return nil, noVerdict(fmt.Errorf("%w: start scanner %s: %v", ErrScan, exe, err))
	}
	var logs output
	printed := make(chan struct{})
	go func() {
		io.Copy(&logs, rOut)
		close(printed)
	}()
	answer := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(r, maxManifest+int64(len(serving))+1))
		r.Close() // a child still writing past the limit gets EPIPE
		answer <- data
	}()
	werr := cmd.Wait() // the child exited, or the deadline killed its process group
	// Anything the plugin started dies with the scan, and the pipes it
	// inherited close.
	killProcessGroup(cmd)
	// A process that left the group (setsid) may still hold the pipes.
	r.SetReadDeadline(time.Now().Add(time.Second))
	rOut.SetReadDeadline(time.Now().Add(time.Second))
	data := <-answer
	<-printed
	says := logs.String()
	if err := parent.Err(); err != nil {
		return nil, noVerdict(err)
	}
	// A child that wrote nothing, not even that it serves, never ran the
	// plugin's code: whatever it did is no verdict on the plugin.
	served := len(data) > 0
	data = bytes.TrimPrefix(data, []byte(serving))
	if ctx.Err() != nil {
		if !served {
			return nil, noVerdict(&unservingError{fmt.Errorf("%w: the scanner child (%s) did not answer within %v, nor start to: does its main call dynop.ServeScanner() first?%s", ErrScan, exe, s.timeout, says)})
		}
		return nil, fmt.Errorf("%w: the scanner timed out after %v reading the plugin's info (it hangs)%s", ErrScan, s.timeout, says)
	}
	if !served {
		status := "exit status 0"
		if werr != nil {
			status = werr.Error()
		}
		return nil, noVerdict(&unservingError{fmt.Errorf("%w: the scanner child (%s) exited without answering (%s): does its main call dynop.ServeScanner() first?%s", ErrScan, exe, status, says)})
	}
	if len(data) > maxManifest {
		return nil, fmt.Errorf("%w: the scanner's answer is larger than %d bytes%s", ErrScan, maxManifest, says)
	}
	var exitErr *exec.ExitError
	if errors.As(werr, &exitErr) && (!exitErr.Exited() || logs.crashed()) {
		return nil, fmt.Errorf("%w: the scanner crashed reading the plugin's info (%v)%s", ErrScan, exitErr, says)
	}
	if werr != nil && len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the scanner failed reading the plugin's info: %v%s", ErrScan, werr, says)
	}
	return parseAnswer(f, data, werr, says)
}

// parseAnswer reads a scanner child's answer.
func parseAnswer(f Format, data []byte, werr error, says string) (*Manifest, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		// It served, then exited 0 without answering: the plugin's code
		// ended the process.
		return nil, fmt.Errorf("%w: the scanner exited reading the plugin's info, without answering (does the plugin exit?)%s", ErrScan, says)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		why := err.Error()
		if isTruncated(data, err) {
			why = "truncated"
		}
		return nil, fmt.Errorf("%w: the scanner printed garbage %s: %s%s", ErrScan, quote(data), why, says)
	}
	if head.Schema == scanErrorSchema {
		var e scanError
		if err := json.Unmarshal(data, &e); err != nil || e.Error == nil {
			return nil, fmt.Errorf("%w: the scanner printed garbage %s: %v%s", ErrScan, quote(data), err, says)
		}
		err := e.Error.error(sentinelsOf([]Format{f}))
		if e.Scanner {
			return nil, noVerdict(fmt.Errorf("%w: scanner child: %w", ErrScan, err))
		}
		if len(e.Error.Kinds) == 0 {
			err = fmt.Errorf("%w: %w", ErrScan, err)
		}
		return nil, err
	}
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%w: the scanner printed garbage %s: %w%s", ErrScan, quote(data), err, says)
	}
	if werr != nil {
		return nil, fmt.Errorf("%w: the scanner answered but then failed: %v%s", ErrScan, werr, says)
	}
	return m, nil
}

// quote shows the start of data in an error message.
func quote(data []byte) string {
	const n = 64
	if len(data) > n {
		return strconv.Quote(string(data[:n])) + "…"
	}
	return strconv.Quote(string(data))
}

// output keeps the start of what a scanner printed: where a crash says
// what it was.
type output struct {
	mu   sync.Mutex
	buf  []byte
	more bool
}

const outputSize = 1024

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(len(p), outputSize-len(o.buf))
	o.buf = append(o.buf, p[:n]...)
	o.more = o.more || n < len(p)
	return len(p), nil
}

// crashed reports whether the output is that of a Go program that died of
// a signal or a fatal error (it exits with status 2 instead of by the
// signal).
func (o *output) crashed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := string(o.buf)
	return strings.HasPrefix(s, "fatal error:") || strings.Contains(s, "\nfatal error:") ||
		strings.HasPrefix(s, "SIG") || strings.Contains(s, "\nSIG") || strings.Contains(s, "[signal ")
}

// String returns what was printed as the end of an error message: empty,
// or "; it printed: …", at most a few lines.
func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(o.buf)), "\n")
	more := o.more
	if len(lines) > 4 {
		lines, more = lines[:4], true
	}
	s := strings.Join(lines, " | ")
	if s == "" {
		return ""
	}
	if more {
		s += " …"
	}
	return "; it printed: " + s
}

// noVerdict marks an error that says nothing about the plugin (no
// scanner could run, the enumeration was cancelled): it is not cached.
func noVerdict(err error) error { return &transientError{err} }

type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// isVerdict reports whether err is the plugin's own fault, worth caching.
func isVerdict(err error) bool {
	var t *transientError
	return !errors.As(err, &t) && !errors.Is(err, ErrMissingLibrary)
}
