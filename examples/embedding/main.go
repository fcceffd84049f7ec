// Command embedding is the program of the host embedding guide,
// docs/embedding.md: a Go program that embeds a dynop host. It opens a
// host over the plugin files and directories named on its command line,
// lists the plugins the host found, acquires a typed interface from a
// plugin, calls it and releases it, runs a small image pipeline, and closes
// the host. Copy it as the start of your own host program.
//
// Usage:
//
//	embedding [flags] [PLUGIN-PATH...]
//
// Each PLUGIN-PATH is a plugin file (a native shared library, a
// WebAssembly module) or a directory of them, such as bin/plugins after
// make build. Without any, the program runs on the Go plugins compiled
// into it: the greeter and text examples and the image operators.
//
// Flags:
//
//	-out DIR          where the pipeline writes its images (default: a new temporary directory)
//	-images DIR       the images to process (default examples/pipelines/images)
//	-only             search only the PLUGIN-PATHs, not $DYNOP_PLUGIN_PATH and the default directories
//	-cache DIR        the registry cache's directory (default $XDG_CACHE_HOME/dynop)
//	-trust DIR        a directory of trusted public keys (*.pub): check plugin files' signatures
//	-signatures P     what to do with a plugin file whose signature does not verify: off, warn or require
//	-sandbox P        which build of a plugin runs: prefer-native (default), unsigned or always
//	-v                log the plugins' lifecycle (debug level)
//
// The program exits with status 0 on success, 1 on an error and 2 on a
// usage error. Ctrl-C stops it; the pipeline then writes nothing, and the
// host still stops every plugin it started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/pipeline"
	"github.com/dynop/dynop/sign"

	// Loaders for plugin files: importing a loader registers it (from
	// init) for its format. Without them the host knows only the Go
	// plugins compiled in, and lists plugin files as broken.
	_ "github.com/dynop/dynop/loader/native" // shared libraries with the C ABI (dlopen)
	_ "github.com/dynop/dynop/loader/wasm"   // WebAssembly modules, sandboxed (Wasmtime; wazero without cgo)

	// Go plugins compiled in: importing one registers it with every host
	// the program opens (plugin.Register from init). Nothing of theirs
	// runs until a host is asked for what they provide.
	"github.com/dynop/dynop/plugins/greeter" // dynop.plugin.greeter, which needs dynop.plugin.text
	_ "github.com/dynop/dynop/plugins/image" // dynop.plugin.image: image.Decode, image.Resize, …
	"github.com/dynop/dynop/plugins/text"    // dynop.plugin.text, which the greeter needs

	// The Go binding of a native plugin's interface: it turns the C
	// function table of dynop.example.VecMath into a vecmath.Math.
	"github.com/dynop/dynop/plugins/vecmath"
)

func main() {
	// First of all: started as a scanner child process by a host (this
	// program's own, reading a plugin file that has no manifest), the
	// program inspects the file, answers and exits here.
	dynop.ServeScanner()

	// Ctrl-C (or SIGTERM) cancels ctx: every call that takes it gives up,
	// and the pipeline leaves no output behind. A second Ctrl-C kills the
	// program at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage): // the flag package printed the problem and the usage
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "embedding: %v\n", err)
		os.Exit(1)
	}
}

// errUsage marks errors in the command line, which the flag package has
// already reported.
var errUsage = errors.New("usage")

// config is what the command line asks for.
type config struct {
	paths    []string // plugin files and directories
	outDir   string
	images   string
	only     bool
	cacheDir string
	trustDir string
	policy   sign.Policy
	sandbox  dynop.SandboxPolicy
	verbose  bool
}

// parseArgs reads the command line (without the program's name).
func parseArgs(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("embedding", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: embedding [flags] [PLUGIN-PATH...]")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.outDir, "out", "", "where the pipeline writes its images (default: a new temporary directory)")
	fs.StringVar(&c.images, "images", filepath.Join("examples", "pipelines", "images"), "the images to process: a directory, a file or a glob")
	fs.BoolVar(&c.only, "only", false, "search only the PLUGIN-PATHs, not $DYNOP_PLUGIN_PATH and the default directories")
	fs.StringVar(&c.cacheDir, "cache", "", "the registry cache's directory (default $XDG_CACHE_HOME/dynop)")
	fs.StringVar(&c.trustDir, "trust", "", "a directory of trusted public keys (*.pub): check plugin files' signatures")
	fs.Func("signatures", "what to do with a plugin file whose signature does not verify: off, warn or require (default: require with -trust, off without)", func(s string) (err error) {
		c.policy, err = sign.ParsePolicy(s)
		return err
	})
	fs.Func("sandbox", "which build of a plugin runs: prefer-native (default), unsigned or always", func(s string) (err error) {
		c.sandbox, err = dynop.ParseSandboxPolicy(s)
		return err
	})
	fs.BoolVar(&c.verbose, "v", false, "log the plugins' lifecycle (debug level)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	c.paths = fs.Args()
	return c, nil
}

// run is the program: it parses args, then opens a host, lists its
// plugins, uses an interface, runs a pipeline and closes the host,
// printing what happens to stdout and logging to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	c, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	// The host logs with log/slog: plugins it cannot use at warn level,
	// every plugin starting and stopping at debug level.
	level := slog.LevelInfo
	if c.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// 1. Open the host. It reads every plugin's Info (plugin files': from
	// their manifests, the registry cache or a scanner child process) and
	// starts none of them.
	h, err := openHost(ctx, c, log)
	if err != nil {
		return err
	}
	// 5. Close the host when done: it stops what is still started,
	// dependents first, and reports references the program never released
	// (dynop.ErrLeaked). It runs even after Ctrl-C, so it gets a context
	// that is not cancelled.
	defer func() {
		if cerr := h.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing the host: %w", cerr))
		} else if err == nil {
			fmt.Fprintln(stdout, "\n== close: every plugin stopped, no reference leaked")
		}
	}()

	// 2. List what it found, usable or not.
	listPlugins(stdout, h)

	// 3. Acquire interfaces, call them, release them.
	if err := greet(ctx, stdout, h); err != nil {
		return err
	}
	if err := vectorMath(ctx, stdout, h); err != nil {
		return err
	}

	// 4. Run a pipeline of operators.
	return runPipeline(ctx, stdout, h, c, log)
}

// openHost opens a host over the plugin paths of c. A path that does
// not exist is an error here: the host itself only logs a warning for
// one, as it does for every path on its search path.
func openHost(ctx context.Context, c *config, log *slog.Logger) (*dynop.Host, error) {
	for _, p := range c.paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("plugin path: %w", err)
		}
	}
	h, err := dynop.Open(ctx, dynop.Options{
		Paths:           c.paths,    // searched first, in order
		NoDefaultPaths:  c.only,     // else also $DYNOP_PLUGIN_PATH, ./plugins next to the executable, $XDG_DATA_HOME/dynop/plugins
		CacheDir:        c.cacheDir, // "" is $XDG_CACHE_HOME/dynop
		TrustDir:        c.trustDir, // "" is no trust store: signatures are not checked
		SignaturePolicy: c.policy,   // the default is require with a trust store, off without
		Sandbox:         c.sandbox,
		Logger:          log,
	})
	if err != nil {
		return nil, fmt.Errorf("opening the host: %w", err)
	}
	return h, nil
}

// listPlugins prints every plugin the host found: its ID, version and
// state, where it comes from, and why it cannot be used if it cannot.
func listPlugins(out io.Writer, h *dynop.Host) {
	plugins := h.Plugins()
	fmt.Fprintf(out, "== open: the host found %d plugins and started none\n", len(plugins))
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	for _, st := range plugins {
		id, version, from := st.Info.ID, "v"+st.Info.Version.String(), st.Path
		if id == "" {
			id, version = "?", "-" // a file so broken that its info is unknown
		}
		if from == "" {
			from = "compiled in"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", id, version, st.State, from)
		if !st.State.Usable() {
			// Broken, unsupported, untrusted or a duplicate: Err says why.
			fmt.Fprintf(tw, "  \t\t\t  why: %v\n", st.Err)
		}
	}
	tw.Flush()
}

// greet acquires the greeter's interface as a typed value, calls it and
// releases it. The first acquisition starts the plugin, and before it
// dynop.plugin.text, which the greeter acquires from its Start;
// releasing the last reference stops the greeter, then the text plugin.
func greet(ctx context.Context, out io.Writer, h *dynop.Host) error {
	fmt.Fprintf(out, "\n== acquire %s from %s: it starts now\n", greeter.Interface.Name, greeter.ID)
	g, ref, err := dynop.Acquire(ctx, h, greeter.ID, greeter.Interface)
	if err != nil {
		return fmt.Errorf("acquiring the greeter: %w", err)
	}
	fmt.Fprintf(out, "Greet(%q) = %q\n", "embedding host", g.Greet("embedding host"))
	fmt.Fprintln(out, "while the reference is held:")
	showState(out, h, greeter.ID, text.ID)
	if err := ref.Release(); err != nil { // the last reference: the greeter stops, then text
		return fmt.Errorf("releasing the greeter: %w", err)
	}
	fmt.Fprintln(out, "after Release:")
	showState(out, h, greeter.ID, text.ID)
	return nil
}

// vectorMath uses the native plugin dynop.plugin.vecmath, written in C,
// if the host found it (make build puts libdynop_vecmath.so in
// bin/plugins). Its interface is a C function table; the Go binding in
// package vecmath makes it a vecmath.Math.
func vectorMath(ctx context.Context, out io.Writer, h *dynop.Host) error {
	fmt.Fprintf(out, "\n== acquire %s from %s, a native plugin\n", vecmath.Interface.Name, vecmath.PluginID)
	m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
	switch {
	case errors.Is(err, dynop.ErrNotFound): // no such plugin (or interface)
		fmt.Fprintf(out, "skipped: %s is not on the search path (give bin/plugins after make build)\n", vecmath.PluginID)
		return nil
	case errors.Is(err, dynop.ErrUnsupported), errors.Is(err, dynop.ErrSignature):
		// Not for this machine or this host's sandbox policy, or its
		// signature does not verify under the signature policy.
		fmt.Fprintf(out, "skipped: %v\n", err)
		return nil
	case err != nil: // a broken file, a failed start, a closed host, …
		return fmt.Errorf("acquiring vecmath: %w", err)
	}
	x, y := []float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}
	fmt.Fprintf(out, "Dot(%v, %v) = %g (Go → C: one cgo call)\n", x, y, m.Dot(x, y))
	if err := ref.Release(); err != nil { // the library is unloaded
		return fmt.Errorf("releasing vecmath: %w", err)
	}
	return nil
}

// thumbnails is the pipeline: decode each image, turn it gray and make it
// small. Its operators come from dynop.plugin.image, compiled in; when the
// native plugin dynop.plugin.imgproc is on the search path, its graph pass
// runs the image.Grayscale node with its SIMD kernel instead. A pipeline
// file would do as well: pipeline.Load("thumbnails.yaml").
const thumbnails = `
name: thumbnails
batch_size: 4
inputs:
  photos: {files: [images/]}  # replaced by Options.Inputs below
operators:
  - {name: decode, op: image.Decode,    inputs: [photos], args: {channels: 3}}
  - {name: gray,   op: image.Grayscale, inputs: [decode]}
  - {name: small,  op: image.Resize,    inputs: [gray],   args: {width: 128, height: 96}}
outputs:
  thumbs: {from: small, format: png}
`

// runPipeline parses, compiles and runs the thumbnails pipeline over
// c.images, writing PNG files into c.outDir, and prints its summary.
func runPipeline(ctx context.Context, out io.Writer, h *dynop.Host, c *config, log *slog.Logger) (err error) {
	outDir := c.outDir
	if outDir == "" {
		if outDir, err = os.MkdirTemp("", "dynop-embedding-"); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(outDir) // empty: a run that fails writes nothing
			}
		}()
	}
	fmt.Fprintf(out, "\n== pipeline: decode, grayscale and resize %s into %s\n", c.images, outDir)

	// Parse checks the YAML's structure; Compile checks it against the
	// operators' schemas before any plugin code runs, then builds the
	// graph with the host's passes, which starts the plugins it needs.
	spec, err := pipeline.Parse("thumbnails.yaml", []byte(thumbnails))
	if err != nil {
		return err
	}
	p, err := pipeline.Compile(ctx, h, spec, pipeline.Options{
		Inputs: map[string][]string{"photos": {c.images}},
		OutDir: outDir,
		Atomic: true, // all or nothing; without it outputs stream, with a journal to resume from
		Logger: log,
	})
	if err != nil {
		return fmt.Errorf("compiling the pipeline: %w", err)
	}
	// Run writes every output or, if it fails or ctx is cancelled, none
	// (Atomic).
	sum, err := p.Run(ctx)
	// Closing the pipeline closes its operator instances: the plugins
	// that provided them may stop.
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("running the pipeline (no output written): %w", err)
	}

	fmt.Fprintf(out, "%s: %s in %s, %.1f ms\n", sum.Pipeline, count(sum.Images, "image"), count(sum.Batches, "batch"), sum.Seconds*1e3)
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tRUN BY\tPLUGIN\tCALLS\tTIME")
	for _, n := range sum.Nodes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%.2f ms\n", n.Node, n.Definition, n.Plugin, n.Calls, n.Seconds*1e3)
	}
	tw.Flush()
	fmt.Fprintf(out, "wrote %s to %s\n", count(len(sum.Outputs), "file"), outDir)
	return nil
}

// count says n things: "1 batch", "2 batches".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// showState prints where the plugins ids are in their lifecycle.
func showState(out io.Writer, h *dynop.Host, ids ...string) {
	for _, id := range ids {
		st, err := h.Plugin(id)
		if err != nil {
			fmt.Fprintf(out, "  %s: %v\n", id, err)
			continue
		}
		fmt.Fprintf(out, "  %s: %s, refs=%d starts=%d stops=%d\n", id, st.State, st.Refs, st.Starts, st.Stops)
	}
}
