// Package scaffold writes new plugin projects: the templates behind
// `dynop new`. A project has the plugin's sources, its build file
// (Makefile, go build or cargo), a test, a one-operator pipeline over a
// sample image and a README with the commands that build it, test it and
// run it through dynop. Each template provides one interface and one
// operator, with a scalar and a SIMD variant where the language allows.
//
// The templates live in templates/LANG, with templates/common for every
// language and templates/gomod for go and go-wasm. Every file there is a
// text/template with the delimiters [[ and ]] (Go and C use {{ }} in
// ordinary code) and the name of every file ends in .tmpl, which is
// dropped, so that no template is mistaken for the module's own source;
// NAME in a path becomes the plugin's name.
package scaffold

import (
	"bytes"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/template"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/internal/srctree"
	"github.com/dynop/dynop/schema"
)

//go:embed all:templates
var templates embed.FS

// Errors that Generate wraps.
var (
	// ErrName: the plugin name or vendor breaks the naming rule.
	ErrName = errors.New("invalid plugin name")
	// ErrLanguage: no template for the language.
	ErrLanguage = errors.New("unknown language")
	// ErrNotEmpty: the project directory has files in it, and Force is
	// not set.
	ErrNotEmpty = errors.New("directory is not empty")
	// ErrNoModule: a Go template needs the dynop module's source and
	// it was not found.
	ErrNoModule = errors.New("dynop module source not found")
	// ErrNoCrate: the Rust template needs the dynop crate (abi/rust)
	// and it was not found.
	ErrNoCrate = errors.New("dynop Rust crate not found")
)

// EnvRustCrate is the environment variable that names the dynop crate's
// directory for the Rust template when Options.RustCrate does not.
const EnvRustCrate = "DYNOP_RUST_CRATE"

// Languages are the languages there are templates for, in the order
// dynop new lists them.
var Languages = []string{"c", "cpp", "go", "go-wasm", "rust"}

// NameRule is the rule plugin names and vendors follow: each becomes a
// part of the plugin ID, a C identifier, a Go package name, a Rust crate
// name and the operator's namespace.
const NameRule = "a lower-case letter, then lower-case letters, digits or '_', at most 32 characters, and not a Go or Rust keyword, a name Rust reserves for its own crates, or dynop (it becomes part of the plugin ID, a C identifier, a Go package and a Rust crate name, beside dynop's own)"

// reserved are the names that follow the letters of NameRule but cannot
// be a Go package or a Rust crate: Go's and Rust's keywords, the crates
// Rust links implicitly, and dynop (the Go package and the Rust crate the
// templates import).
var reserved = strings.Fields(`
	break case chan const continue default defer else fallthrough for func go goto if import
	interface map package range return select struct switch type var main
	as async await crate dyn enum extern false fn impl in let loop match mod move mut pub ref self
	static super trait true unsafe use where while abstract become box do final macro override priv
	try typeof unsized virtual yield gen
	std core alloc test proc_macro dynop`)

// Options says what project to write.
type Options struct {
	// Name is the plugin's name: the plugin ID is Vendor.plugin.Name and
	// its operator Name.Brighten. See NameRule.
	Name string
	// Lang is one of Languages.
	Lang string
	// Dir is the project directory; "" means ./Name.
	Dir string
	// Vendor is the first part of the plugin ID; "" means "example".
	Vendor string
	// Force writes into a directory that is not empty, replacing the
	// files the template has.
	Force bool
	// Module is the Go module path of the go and go-wasm templates; ""
	// means example.com/Name.
	Module string
	// DynopSource is the directory of the dynop module's source, which
	// the Go templates' go.mod points at with a replace directive (the
	// module is not published); "" means the tree this program was built
	// from, if it is still there.
	DynopSource string
	// RustCrate is the directory of the dynop crate (abi/rust in dynop's
	// source, share/dynop/rust in an installation), which the Rust
	// template's Cargo.toml depends on by path; "" means $DYNOP_RUST_CRATE,
	// else share/dynop/rust beside the directory of this executable (an
	// installed dynop), else abi/rust of the tree this program was built
	// from.
	RustCrate string
	// Dynop is the dynop command the Makefiles of the c, cpp and go-wasm
	// templates run by default (for the manifest, make run): the program
	// that writes the project. "" means the dynop on PATH; so does a path
	// that a Makefile cannot hold (one with spaces, '$', '#' and the like).
	Dynop string
}

// Project is what Generate wrote.
type Project struct {
	// Dir is the project directory.
	Dir string
	// Files are the paths written, relative to Dir, sorted.
	Files []string
	// ID is the plugin ID, Op its operator and Interface its interface
	// (empty for go-wasm: Go WebAssembly modules cannot provide one).
	ID, Op, Interface string
	// Commands build the project, test it and run its pipeline through
	// dynop, in the project directory, as its README gives them.
	Commands []Command
}

// A Command is a shell command line and what it does.
type Command struct {
	Line, Comment string
}

// Commands returns the three commands that build, test and run a
// project of lang for the plugin name.
func Commands(lang, name string) []Command {
	switch lang {
	case "c", "cpp":
		return []Command{
			{"make", "build/lib" + name + ".so and its manifest"},
			{"make test", "every SIMD variant agrees with the scalar reference"},
			{"dynop run --plugin build/lib" + name + ".so pipeline.yaml", "writes out/sample.png"},
		}
	case "go":
		return []Command{
			{"go build -o bin/dynop ./cmd/dynop", "dynop with this plugin compiled in"},
			{"go test ./...", "every variant agrees with the scalar reference"},
			{"bin/dynop run pipeline.yaml", "writes out/sample.png"},
		}
	case "go-wasm":
		return []Command{
			{"make", "build/" + name + ".wasm and its manifest"},
			{"go test ./...", "the kernel, on this machine"},
			{"dynop run --plugin build/" + name + ".wasm pipeline.yaml", "writes out/sample.png"},
		}
	case "rust":
		return []Command{
			{"cargo build --release", "target/release/lib" + name + ".so"},
			{"cargo test", "every SIMD variant agrees with the scalar reference"},
			{"dynop run --plugin target/release/lib" + name + ".so pipeline.yaml", "writes out/sample.png"},
		}
	}
	return nil
}

// CheckName reports whether name follows NameRule; what says what it is
// ("plugin name", "vendor"). The error wraps ErrName and states the rule.
func CheckName(what, name string) error {
	ok := name != "" && len(name) <= 32 && name[0] >= 'a' && name[0] <= 'z' && !slices.Contains(reserved, name)
	for _, c := range []byte(name) {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}
	if !ok {
		return fmt.Errorf("%w: %s %q: want %s", ErrName, what, name, NameRule)
	}
	return nil
}

// CheckLanguage reports whether there is a template for lang; the error
// wraps ErrLanguage and lists the languages there are.
func CheckLanguage(lang string) error {
	if !slices.Contains(Languages, lang) {
		return fmt.Errorf("%w %q: want one of %s", ErrLanguage, lang, strings.Join(Languages, ", "))
	}
	return nil
}

// Generate writes the project opts describe. It refuses a directory
// that has files in it unless opts.Force is set, and writes nothing if
// any option is wrong.
func Generate(opts Options) (*Project, error) {
	if err := CheckLanguage(opts.Lang); err != nil {
		return nil, err
	}
	if err := CheckName("plugin name", opts.Name); err != nil {
		return nil, err
	}
	if opts.Vendor == "" {
		opts.Vendor = "example"
	}
	if err := CheckName("vendor", opts.Vendor); err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		opts.Dir = opts.Name
	}
	d, err := newData(opts)
	if err != nil {
		return nil, err
	}
	if err := schema.ValidatePluginID(d.ID); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrName, err)
	}
	if err := checkEmpty(opts.Dir, opts.Force); err != nil {
		return nil, err
	}
	files, err := render(opts.Lang, d)
	if err != nil {
		return nil, err
	}
	p := &Project{Dir: opts.Dir, ID: d.ID, Op: d.Op, Interface: d.Interface, Commands: d.Commands}
	if opts.Lang == "go-wasm" {
		p.Interface = ""
	}
	for name, content := range files {
		dst := filepath.Join(opts.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, content, 0o644); err != nil {
			return nil, err
		}
		p.Files = append(p.Files, name)
	}
	slices.Sort(p.Files)
	return p, nil
}

// checkEmpty refuses a directory with entries in it unless force is set;
// a directory that does not exist is fine.
func checkEmpty(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0 && !force:
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		more := ""
		if len(entries) > 3 {
			more = fmt.Sprintf(" and %d more", len(entries)-3)
		}
		return fmt.Errorf("%w: %s has %s%s; choose another --dir, or pass --force to write the template's files over it", ErrNotEmpty, dir, strings.Join(names, ", "), more)
	}
	return nil
}

// data is what the templates see.
type data struct {
	Name, Vendor string
	Upper        string // NAME in upper case, for C macros
	Lang         string
	ID           string // vendor.plugin.name
	Op           string // name.Brighten
	Interface    string // vendor.name.Brightness
	UID          string // the interface's UID, 8-4-4-4-12
	UIDArgs      string // the UID as DYNOP_UID's arguments
	Module       string // Go module path
	DynopSource  string // replace target of the Go templates
	RustCrate    string // the dynop crate's directory as a TOML string, for Cargo.toml
	MakeDynop    string // the Makefiles' DYNOP ?= line
	DynopExe     string // the dynop that MakeDynop names first; "" if none
	// DynopRequires is a require block of dynop's own requirements, as
	// indirect ones, so that the Go templates build without go mod tidy.
	DynopRequires string
	dynopSum      []byte // dynop's go.sum, for the Go templates
	GoVersion     string // the go directive of the Go templates
	Commands      []Command
	APIMajor      int
	APIMinor      int
	APIPatch      int
}

func newData(opts Options) (*data, error) {
	uid := make([]byte, 16)
	rand.Read(uid)
	uid[6] = uid[6]&0x0f | 0x40 // version 4
	uid[8] = uid[8]&0x3f | 0x80 // RFC 4122 variant
	hex := fmt.Sprintf("%X", uid)
	d := &data{
		Name: opts.Name, Vendor: opts.Vendor, Lang: opts.Lang,
		Upper:     strings.ToUpper(opts.Name),
		ID:        opts.Vendor + ".plugin." + opts.Name,
		Op:        opts.Name + ".Brighten",
		Interface: opts.Vendor + "." + opts.Name + ".Brightness",
		UID:       hex[0:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:32],
		UIDArgs: fmt.Sprintf("0x%s, 0x%s, 0x%s, 0x%02X, 0x%02X, 0x%02X, 0x%02X, 0x%02X, 0x%02X, 0x%02X, 0x%02X",
			hex[0:8], hex[8:12], hex[12:16], uid[8], uid[9], uid[10], uid[11], uid[12], uid[13], uid[14], uid[15]),
		Module:    opts.Module,
		Commands:  Commands(opts.Lang, opts.Name),
		GoVersion: goVersion(),
		APIMajor:  int(schema.APIVersion.Major),
		APIMinor:  int(schema.APIVersion.Minor),
		APIPatch:  int(schema.APIVersion.Patch),
	}
	if d.Module == "" {
		d.Module = "example.com/" + opts.Name
	}
	d.MakeDynop, d.DynopExe = makeDynop(opts.Dynop)
	if opts.Lang == "rust" {
		dir, err := rustCrate(opts.RustCrate)
		if err != nil {
			return nil, err
		}
		d.RustCrate = tomlString(filepath.ToSlash(dir))
	}
	if opts.Lang == "go" || opts.Lang == "go-wasm" {
		src, err := dynopSource(opts.DynopSource)
		if err != nil {
			return nil, err
		}
		d.DynopSource = filepath.ToSlash(src)
		mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return nil, err
		}
		d.DynopRequires = indirectRequires(mod)
		if d.dynopSum, err = os.ReadFile(filepath.Join(src, "go.sum")); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoModule, err)
		}
	}
	return d, nil
}

// indirectRequires returns the requirements of the go.mod text mod as a
// require block of indirect ones ("" if it has none).
func indirectRequires(mod []byte) string {
	var reqs []string
	block := false
	for _, line := range strings.Split(string(mod), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "":
			reqs = append(reqs, line)
		case strings.HasPrefix(line, "require "):
			reqs = append(reqs, strings.TrimSpace(strings.TrimPrefix(line, "require ")))
		}
	}
	if len(reqs) == 0 {
		return ""
	}
	slices.Sort(reqs)
	return "\n// What dynop requires, for builds without go mod tidy.\nrequire (\n\t" + strings.Join(reqs, " // indirect\n\t") + " // indirect\n)\n"
}

// goVersion is the go directive for the Go templates: the language
// version of the toolchain that built this program, as major.minor.0 (the
// form go mod tidy writes).
func goVersion() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 || strings.ContainsAny(parts[1], " -") {
		return "1.26.0"
	}
	return parts[0] + "." + parts[1] + ".0"
}

// dynopSource finds the dynop module's source directory: dir if set,
// else the tree this package was compiled from.
func dynopSource(dir string) (string, error) {
	from := "--dynop"
	if dir == "" {
		if dir = srctree.Built(); dir == "" {
			return "", fmt.Errorf("%w: this dynop was built with -trimpath and cannot tell where its source is; pass --dynop DIR, a checkout of github.com/dynop/dynop", ErrNoModule)
		}
		from = "the tree this dynop was built from"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if !srctree.IsRoot(abs) {
		return "", fmt.Errorf("%w: %s (%s) has no go.mod of module github.com/dynop/dynop; pass --dynop DIR, a checkout of github.com/dynop/dynop", ErrNoModule, abs, from)
	}
	return abs, nil
}

// rustCrate finds the dynop crate: dir if set, else $DYNOP_RUST_CRATE,
// else share/dynop/rust beside this executable's directory (symbolic
// links resolved), else abi/rust in the tree this package was compiled
// from.
func rustCrate(dir string) (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		exe = ""
	}
	return findRustCrate(dir, os.Getenv(EnvRustCrate), exe, srctree.Built())
}

// findRustCrate is rustCrate with its places given: the directory a flag
// names, the environment variable's value, the executable's path and
// the source tree's root ("" for none of each). A directory named by the
// flag or the variable must be the crate; the others are searched.
func findRustCrate(flagDir, envDir, exe, src string) (string, error) {
	how := "see docs/authoring.md, Rust"
	for _, named := range []struct{ dir, from string }{{flagDir, "--dynop-crate"}, {envDir, "$" + EnvRustCrate}} {
		if named.dir == "" {
			continue
		}
		abs, err := filepath.Abs(named.dir)
		if err != nil {
			return "", err
		}
		if !isRustCrate(abs) {
			return "", fmt.Errorf("%w: %s (%s) has no Cargo.toml of the package dynop; want the directory abi/rust of a dynop checkout, or share/dynop/rust of an installation (%s)", ErrNoCrate, abs, named.from, how)
		}
		return abs, nil
	}
	var looked []string
	if exe != "" {
		dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), "share", "dynop", "rust")
		if isRustCrate(dir) {
			return dir, nil
		}
		looked = append(looked, dir+" (beside this dynop, "+exe+")")
	}
	if src != "" {
		dir, err := filepath.Abs(filepath.Join(src, "abi", "rust"))
		if err != nil {
			return "", err
		}
		if isRustCrate(dir) {
			return dir, nil
		}
		looked = append(looked, dir+" (the tree this dynop was built from)")
	}
	if len(looked) == 0 {
		looked = append(looked, "nowhere: this dynop cannot tell where it is or where its source is")
	}
	return "", fmt.Errorf("%w: looked in %s; pass --dynop-crate DIR or set %s=DIR, DIR the directory abi/rust of a dynop checkout or share/dynop/rust of an installation (%s)",
		ErrNoCrate, strings.Join(looked, " and "), EnvRustCrate, how)
}

// isRustCrate reports whether dir holds the dynop crate: a Cargo.toml
// whose package is named dynop.
func isRustCrate(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	return err == nil && crateName.Match(b)
}

// crateName matches the line of a Cargo.toml that names the dynop crate.
var crateName = regexp.MustCompile(`(?m)^name\s*=\s*"dynop"\s*$`)

// tomlString is s as a TOML basic string, quotes included.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// makeSafe matches the paths a Makefile holds as they are: no spaces,
// and none of the characters make or the shell give a meaning to.
var makeSafe = regexp.MustCompile(`^[A-Za-z0-9_./+@~-]+$`)

// makeDynop returns the Makefiles' DYNOP assignment: the dynop at path
// if it is still there when make runs, else the dynop on PATH, else an
// error that says how to choose one; and the path it names, "" if path
// is "" or a Makefile cannot hold it. The error is expanded only by the
// recipes that run dynop, so that make test builds without one.
func makeDynop(path string) (line, exe string) {
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil && makeSafe.MatchString(filepath.ToSlash(abs)) {
			exe = filepath.ToSlash(abs)
		}
	}
	if exe == "" {
		return "DYNOP ?= $(or $(shell command -v dynop),$(error dynop not found: it is not on PATH; say which with make DYNOP=/path/to/dynop))", ""
	}
	return fmt.Sprintf("DYNOP ?= $(or $(wildcard %[1]s),$(shell command -v dynop),$(error dynop not found: not at %[1]s, the dynop that wrote this project, nor on PATH; say which with make DYNOP=/path/to/dynop))", exe), exe
}

// render executes the templates of lang and the shared ones, and adds
// the dynop headers (C, C++, Rust) and the sample image, by path.
func render(lang string, d *data) (map[string][]byte, error) {
	out := make(map[string][]byte)
	roots := []string{"templates/common", "templates/" + lang}
	if d.dynopSum != nil {
		roots = append(roots, "templates/gomod") // go.mod of the Go templates
	}
	for _, root := range roots {
		err := fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			src, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			t, err := template.New(p).Delims("[[", "]]").Option("missingkey=error").Parse(string(src))
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := t.Execute(&b, d); err != nil {
				return err
			}
			name := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
			name = strings.ReplaceAll(name, "NAME", d.Name)
			out[name] = b.Bytes()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scaffold: template %s: %w", lang, err)
		}
	}
	if lang == "c" || lang == "cpp" || lang == "rust" {
		h, err := abi.Include.ReadFile("include/dynop/dynop.h")
		if err != nil {
			return nil, err
		}
		out["include/dynop/dynop.h"] = h
	}
	if d.dynopSum != nil {
		out["go.sum"] = d.dynopSum
	}
	img, err := sampleImage()
	if err != nil {
		return nil, err
	}
	out["images/sample.png"] = img
	return out, nil
}

// sampleImage draws the project's sample input: 96×64 RGB, a gradient
// with a ring, so that brightening it visibly changes it.
func sampleImage() ([]byte, error) {
	const w, h = 96, 64
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			r := math.Hypot(float64(x-w/2), float64(y-h/2))
			ring := uint8(0)
			if r > 18 && r < 24 {
				ring = 90
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128 + ring, 255})
		}
	}
	var b bytes.Buffer
	err := png.Encode(&b, img)
	return b.Bytes(), err
}
