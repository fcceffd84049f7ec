package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/internal/scaffold"
)

// newCommand writes a new plugin project: dynop new --lang LANG NAME.
func newCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	lang := fs.String("lang", "", "the plugin's language: "+strings.Join(scaffold.Languages, ", "))
	dir := fs.String("dir", "", "the project directory (default ./NAME)")
	vendor := fs.String("vendor", "example", "the plugin ID's first part: VENDOR.plugin.NAME")
	force := fs.Bool("force", false, "write into a directory that is not empty")
	module := fs.String("module", "", "go and go-wasm: the Go module path (default example.com/NAME)")
	dynopSrc := fs.String("dynop", "", "go and go-wasm: a checkout of the dynop module, for go.mod's replace (default: the tree this dynop was built from)")
	crate := fs.String("dynop-crate", "", "rust: the dynop crate that Cargo.toml depends on, abi/rust of a checkout (default $"+scaffold.EnvRustCrate+", else the installed one, else the tree this dynop was built from)")
	noCheck := fs.Bool("no-check", false, "write the project even if its toolchain is not on PATH")
	rest, err := parseInterleaved("new", fs, args) // dynop new NAME --lang c works too
	if err != nil {
		return err
	}
	switch {
	case *lang == "":
		return fmt.Errorf("%w: new needs --lang, one of %s", errUsage, strings.Join(scaffold.Languages, ", "))
	case len(rest) != 1:
		return fmt.Errorf("%w: new takes one plugin NAME, got %d (%q)", errUsage, len(rest), rest)
	}
	if err := scaffold.CheckLanguage(*lang); err != nil {
		return err
	}
	if !*noCheck {
		if err := scaffold.CheckToolchain(*lang); err != nil {
			return fmt.Errorf("%w; or pass --no-check to write the project anyway", err)
		}
	}
	p, err := scaffold.Generate(scaffold.Options{
		Name: rest[0], Lang: *lang, Dir: *dir, Vendor: *vendor, Force: *force,
		Module: *module, DynopSource: *dynopSrc, RustCrate: *crate, Dynop: executable(),
	})
	if err != nil {
		if errors.Is(err, scaffold.ErrNoModule) {
			return fmt.Errorf("%w (the %s template's go.mod needs it)", err, *lang)
		}
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: plugin %s, operator %s", p.Dir, p.ID, p.Op)
	if p.Interface != "" {
		fmt.Fprintf(stdout, ", interface %s", p.Interface)
	}
	fmt.Fprintf(stdout, " (%s)\n\nnext: cd %s and follow README.md:\n\n", english.Plural(len(p.Files), "file"), filepath.Clean(p.Dir))
	for _, c := range p.Commands {
		fmt.Fprintf(stdout, "  %-40s # %s\n", c.Line, c.Comment)
	}
	return nil
}

// executable is the path of this program, for the Makefiles dynop new
// writes; "" if it cannot tell.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
