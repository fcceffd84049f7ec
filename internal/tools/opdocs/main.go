// Command opdocs writes docs/operators.md, the reference of every
// operator the repository ships, from what cannot drift from the code:
//
//   - the operators' schemas as a dynop host sees them (inputs with their
//     dtypes and layouts, outputs, arguments with their types, defaults,
//     ranges, allowed values and former names, devices), opened with the
//     Go plugins of plugins/image and plugins/npy compiled in and the
//     native C plugins plugins/imgproc, plugins/codec and plugins/blas
//     built from source as internal/cbuild builds them for tests;
//   - each operator's CPU variants and the graph passes that replace it,
//     from the host and the plugins' infos;
//   - its definition: the paragraphs of its plugin package's doc comment
//     about it (see [Definition]);
//   - its measured agreement with OpenCV: the repository's tests and
//     benchmarks that compare with OpenCV, in the table [openCV], which
//     generation checks against the tests themselves.
//
// Usage, from anywhere in the repository:
//
//	go run ./internal/tools/opdocs [-o FILE]
//
// FILE defaults to docs/operators.md of the repository. Where there is
// no C compiler, no cgo (CGO_ENABLED=0: no native loader) or no headers
// of the codec or blas plugins' libraries, the plugins it cannot build or load
// are named in the file instead of documented. TestOperatorsDoc fails
// when the file differs from what the generator writes, and is skipped
// only where this machine cannot document a plugin the file documents.
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/opfmt"
	_ "github.com/dynop/dynop/loader/native" // the native plugins
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/plugins/npy"
	"github.com/dynop/dynop/schema"
)

// File is the generated file's path in the repository.
const File = "docs/operators.md"

func main() {
	dynop.ServeScanner() // the host inspects the native plugins in a child process: this program
	out := flag.String("o", "", "the file to write (default: "+File+" of the repository)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: opdocs [-o FILE]\n\nWrites the operator reference %s from the operators' schemas.\n\n", File)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	doc, err := Generate(context.Background(), cbuild.Root())
	if err != nil {
		fmt.Fprintln(os.Stderr, "opdocs:", err)
		os.Exit(1)
	}
	path := cmp.Or(*out, filepath.Join(cbuild.Root(), filepath.FromSlash(File)))
	if err := os.WriteFile(path, doc.Markdown, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "opdocs:", err)
		os.Exit(1)
	}
	for _, m := range doc.Missing {
		fmt.Fprintf(os.Stderr, "opdocs: %s not documented: %s\n", m.ID, m.Why)
	}
}

// shipped is an operator plugin of the repository.
type shipped struct {
	id  string
	dir string // its package, repository-relative
	// what kind of plugin it is, in words
	kind string
	// goPlugin returns a Go plugin; build builds a native one into dir
	// with the C compiler cc (an error wrapping errMissing: the machine
	// lacks what it needs, and the file says so).
	goPlugin func() plugin.Plugin
	build    func(cc, dir string) (string, error)
}

// errMissing marks a plugin this machine cannot build.
var errMissing = errors.New("cannot be built here")

// plugins are the repository's operator plugins, in the file's order.
var plugins = []shipped{
	{id: imageplugin.ID, dir: "plugins/image", kind: "Go plugin, compiled in", goPlugin: imageplugin.New},
	{id: npy.ID, dir: "plugins/npy", kind: "Go plugin, compiled in", goPlugin: npy.New},
	{id: "dynop.plugin.imgproc", dir: "plugins/imgproc", kind: "native C plugin, libdynop_imgproc.so from " + cbuild.ImgprocSource,
		build: func(cc, dir string) (string, error) {
			return cbuild.Build(cc, dir, "libdynop_imgproc.so", cbuild.ImgprocSource, cbuild.ImgprocFlags, nil)
		}},
	{id: "dynop.plugin.codec", dir: "plugins/codec", kind: "native C plugin, libdynop_codec.so from " + cbuild.CodecSource + ", linked with libturbojpeg, libpng and libwebp",
		build: func(cc, dir string) (string, error) {
			if _, _, err := cbuild.CodecFlags(cc); err != nil {
				return "", fmt.Errorf("%w: the headers of libturbojpeg, libpng or libwebp are missing (apt-get install libturbojpeg0-dev libpng-dev libwebp-dev)", errMissing)
			}
			return cbuild.BuildCodec(cc, dir)
		}},
	{id: "dynop.plugin.blas", dir: "plugins/blas", kind: "native C plugin, libdynop_blas.so from " + cbuild.BLASSource + ", linked with OpenBLAS",
		build: func(cc, dir string) (string, error) {
			if _, _, err := cbuild.BLASFlags(cc); err != nil {
				return "", fmt.Errorf("%w: OpenBLAS's cblas.h is missing (apt-get install libopenblas-dev)", errMissing)
			}
			return cbuild.BuildBLAS(cc, dir)
		}},
}

// Doc is a generated operator reference.
type Doc struct {
	// Markdown is the file's content.
	Markdown []byte
	// Missing are the plugins this machine could not build, which the
	// file names instead of documenting them.
	Missing []Missing
}

// Missing is a plugin the generator could not build, and why.
type Missing struct {
	ID, Why string
}

// Generate builds the repository's plugins in a temporary directory,
// opens a host with them and returns the operator reference; root is the
// repository's root.
func Generate(ctx context.Context, root string) (*Doc, error) {
	tmp, err := os.MkdirTemp("", "opdocs")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	opts := dynop.Options{NoRegistered: true, NoDefaultPaths: true, CacheDir: filepath.Join(tmp, "cache"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	doc := &Doc{}
	cc, ccErr := cbuild.CompilerCommand(false)
	for _, p := range plugins {
		switch {
		case p.goPlugin != nil:
			opts.Plugins = append(opts.Plugins, p.goPlugin())
		case !nativeLoader:
			doc.Missing = append(doc.Missing, Missing{p.id, "the generator was built without cgo (CGO_ENABLED=0), so it cannot load native plugins"})
		case ccErr != nil:
			doc.Missing = append(doc.Missing, Missing{p.id, "there is no C compiler ($CC, else cc)"})
		default:
			lib, err := p.build(cc, tmp)
			if errors.Is(err, errMissing) {
				doc.Missing = append(doc.Missing, Missing{p.id, strings.TrimPrefix(err.Error(), errMissing.Error()+": ")})
				continue
			}
			if err != nil {
				return nil, err
			}
			opts.Paths = append(opts.Paths, lib)
		}
	}
	h, err := dynop.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	g := &generator{root: root, host: h, byID: map[string]dynop.PluginStatus{}, missing: doc.Missing}
	for _, st := range h.Plugins() {
		if st.Err != nil {
			return nil, fmt.Errorf("plugin %s (%s): %s: %w", st.Info.ID, cmp.Or(st.Path, "compiled in"), st.State, st.Err)
		}
		g.byID[st.Info.ID] = st
	}
	for _, e := range h.Operators().List() {
		if !slices.ContainsFunc(plugins, func(p shipped) bool { return p.id == e.Plugin }) {
			return nil, fmt.Errorf("operator %s of %q: not one of the shipped plugins", e.Schema.Name, e.Plugin)
		}
		g.ops = append(g.ops, e)
	}
	if g.comparisons, err = checkOpenCV(root, g.ops, doc.Missing); err != nil {
		return nil, err
	}
	if doc.Markdown, err = g.write(ctx); err != nil {
		return nil, err
	}
	return doc, nil
}

// generator writes the file.
type generator struct {
	root        string
	host        *dynop.Host
	byID        map[string]dynop.PluginStatus
	missing     []Missing
	ops         []op.Entry // sorted by name
	comparisons map[string][]comparison
	buf         bytes.Buffer
}

func (g *generator) printf(format string, args ...any) { fmt.Fprintf(&g.buf, format, args...) }

func (g *generator) write(ctx context.Context) ([]byte, error) {
	g.printf("# Operators\n\n")
	g.printf("<!-- Generated by go run ./internal/tools/opdocs; do not edit. -->\n\n")
	g.printf("Every operator the repository ships, grouped by plugin: what it takes and yields, its arguments, its devices and CPU variants, the graph passes that run another operator in its place, its definition and how it compares with OpenCV.\n")
	g.printf("This file is generated from the operators' schemas as a dynop host sees them, from the plugin packages' doc comments and from the tests that compare with OpenCV: `go run ./internal/tools/opdocs` rewrites it, and `TestOperatorsDoc` (internal/tools/opdocs) fails when it is out of date.\n")
	g.printf("`dynop inspect OPERATOR` prints the same fields for the plugins a host finds, and the CPU variant this machine runs.\n\n")
	g.printf("How to read it: an input's dtypes are separated by `|`, and its layouts name its dimensions (`HWC`: height, width, channels); an optional input may be left out. What an output's line says is what validation knows of it before anything runs (`like images`: the dtype, and the layout where none is given, of the input `images`). An argument is `name type`, then `(required)` or `= default`, then in brackets its range in interval notation, the values it may take and its former names, which are still accepted. A plugin's CPU variants are listed best first; the host runs the first one the CPU has, and the last is the portable reference, which every other variant matches.\n\n")
	for _, m := range g.missing {
		g.printf("**Not documented: %s**, which could not be built where this file was generated: %s. Run the generator again where it builds.\n\n", m.ID, md(m.Why))
	}
	g.printf("| plugin | operators |\n|---|---|\n")
	for _, p := range plugins {
		var names []string
		for _, e := range g.ops {
			if e.Plugin == p.id {
				names = append(names, fmt.Sprintf("[%s](#%s)", e.Schema.Name, anchor(e.Schema.Name)))
			}
		}
		if len(names) == 0 {
			names = []string{"(not built where this file was generated)"}
		}
		g.printf("| [%s](#%s) | %s |\n", p.id, anchor(p.id), strings.Join(names, ", "))
	}
	g.printf("\n")
	for _, p := range plugins {
		if err := g.writePlugin(ctx, p); err != nil {
			return nil, err
		}
	}
	return g.buf.Bytes(), nil
}

func (g *generator) writePlugin(ctx context.Context, p shipped) error {
	g.printf("## %s\n\n", p.id)
	if i := slices.IndexFunc(g.missing, func(m Missing) bool { return m.ID == p.id }); i >= 0 {
		g.printf("Not documented: the plugin (%s, [`%s`](../%s/)) could not be built where this file was generated: %s.\n\n", p.kind, p.dir, p.dir, md(g.missing[i].Why))
		return nil
	}
	st, ok := g.byID[p.id]
	if !ok {
		return fmt.Errorf("plugin %s: the host does not know it", p.id)
	}
	g.printf("%s, version %s, package [`%s`](../%s/): %s\n\n", upperFirst(p.kind), st.Info.Version, p.dir, p.dir, md(st.Info.Description))
	defs, err := loadDefinitions(g.root, p.dir)
	if err != nil {
		return err
	}
	for _, e := range g.ops {
		if e.Plugin != p.id {
			continue
		}
		if err := g.writeOp(ctx, p, defs, e); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) writeOp(ctx context.Context, p shipped, defs *definitions, e op.Entry) error {
	s := e.Schema
	g.printf("### %s\n\n", s.Name)
	g.printf("%s\n\n", md(s.Doc))
	g.printf("- **Devices:** %s\n", opfmt.Devices(s.Devices))
	if len(s.Inputs) == 0 {
		g.printf("- **Inputs:** none\n")
	} else {
		g.printf("- **Inputs:**\n")
		for i, in := range s.Inputs {
			g.printf("  - %s\n", item(in.Name, cmp.Or(opfmt.Input(&s, i), "any"), in.Doc))
		}
	}
	if len(s.Outputs) == 0 {
		g.printf("- **Outputs:** none\n")
	} else {
		g.printf("- **Outputs:**\n")
		for _, out := range s.Outputs {
			g.printf("  - %s\n", item(out.Name, cmp.Or(opfmt.Output(out), "not known before it runs"), out.Doc))
		}
	}
	if len(s.Args) == 0 {
		g.printf("- **Arguments:** none\n")
	} else {
		g.printf("- **Arguments:**\n")
		for _, a := range s.Args {
			g.printf("  - %s\n", item(a.Name, strings.TrimPrefix(opfmt.Arg(a), a.Name+" "), a.Doc))
		}
	}
	ch, err := g.host.Operators().Variants(ctx, s.Name)
	if err != nil {
		return fmt.Errorf("operator %s: variants: %w", s.Name, err)
	}
	if len(ch.Variants) == 0 {
		g.printf("- **CPU variants:** none: one implementation, for every CPU\n")
	} else {
		var vs []string
		for _, v := range ch.Variants {
			vs = append(vs, fmt.Sprintf("`%s` (needs %s)", v.Name, strings.Join(cmpOr(v.Needs.Names(), "nothing"), ", ")))
		}
		g.printf("- **CPU variants**, best first: %s\n", strings.Join(vs, ", "))
	}
	var passes []string
	for _, q := range plugins {
		st, ok := g.byID[q.id]
		if !ok {
			continue
		}
		for _, d := range st.Info.Passes {
			if d.Kind == schema.Populate && d.Match == s.Name {
				passes = append(passes, fmt.Sprintf("`%s` (%s pass of [%s](#%s)): %s", d.Name, d.Kind, q.id, anchor(q.id), md(d.Doc)))
			}
		}
	}
	if len(passes) == 0 {
		g.printf("- **Replaced by passes:** none\n")
	} else {
		g.printf("- **Replaced by passes** (graphs built with the host's passes run another operator in its place; `graph.BuildOptions.Skip` keeps it):\n")
		for _, l := range passes {
			g.printf("  - %s\n", l)
		}
	}
	g.printf("\n")
	g.writeOpenCV(s.Name)
	def := defs.Definition(shortName(s.Name), anchorOf(g.ops))
	if def == "" {
		g.printf("**Definition:** the doc comment of package %s ([%s](../%s)) has no paragraph of its own on %s; its doc above is its definition.\n\n", p.dir, defs.file, defs.file, shortName(s.Name))
	} else {
		g.printf("**Definition**, quoted from the doc comment of package %s ([%s](../%s)):\n\n%s\n", p.dir, defs.file, defs.file, def)
	}
	return nil
}

// writeOpenCV says how the operator compares with OpenCV.
func (g *generator) writeOpenCV(name string) {
	cs := g.comparisons[name]
	outputs := slices.ContainsFunc(cs, func(c comparison) bool { return c.outputs })
	switch {
	case len(cs) == 0 && noCounterpart[name] != "":
		g.printf("**Agreement with OpenCV:** nothing to compare: %s\n\n", noCounterpart[name])
		return
	case len(cs) == 0:
		g.printf("**Agreement with OpenCV:** not compared with OpenCV yet.\n\n")
		return
	case !outputs:
		g.printf("**Agreement with OpenCV:** outputs not compared with OpenCV yet; only its speed is:\n\n")
	default:
		g.printf("**Agreement with OpenCV:**\n\n")
	}
	for _, c := range cs {
		g.printf("- `%s` ([%s](../%s)): %s\n", c.fn, c.file, c.file, c.what)
	}
	g.printf("\n")
}

// item is one input, output or argument: its name, what the schema says
// of it, its doc.
func item(name, what, doc string) string {
	line := fmt.Sprintf("`%s` `%s`", name, what)
	if doc != "" {
		line += " — " + md(doc)
	}
	return line
}

func cmpOr(s []string, none string) []string {
	if len(s) == 0 {
		return []string{none}
	}
	return s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shortName is the operator's name after its namespaces: "Resize" of
// "imgproc.Resize".
func shortName(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// anchor is the id GitHub gives a heading: lower case, without
// punctuation but - and _, spaces as -.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchorOf returns a function giving the anchor of an operator's section
// by its full name, "" for no such operator.
func anchorOf(ops []op.Entry) func(name string) string {
	return func(name string) string {
		if slices.ContainsFunc(ops, func(e op.Entry) bool { return e.Schema.Name == name }) {
			return "#" + anchor(name)
		}
		return ""
	}
}

// md escapes text for Markdown: the characters that would start
// emphasis, code, links or HTML.
func md(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
