package scaffold

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrToolchain: a command a template builds with is not on PATH.
var ErrToolchain = errors.New("toolchain not found")

// A Tool is a command a template's build needs and where it comes from.
type Tool struct {
	// Command is looked up on PATH.
	Command string
	// Debian is the Debian (and Ubuntu) package that installs it.
	Debian string
	// Other says how to get it elsewhere; may be "".
	Other string
}

var (
	toolMake  = Tool{"make", "make", ""}
	toolCC    = Tool{"cc", "gcc", "or clang"}
	toolCXX   = Tool{"c++", "g++", "or clang"}
	toolGo    = Tool{"go", "golang-go", "or https://go.dev/dl"}
	toolCargo = Tool{"cargo", "cargo", "or rustup, https://rustup.rs"}
	toolRustc = Tool{"rustc", "rustc", "or rustup, https://rustup.rs"}
)

// Tools returns the commands that building and testing a project of lang
// needs. The Go templates need a C compiler too: the dynop they build
// loads native plugins through cgo.
func Tools(lang string) []Tool {
	switch lang {
	case "c":
		return []Tool{toolCC, toolMake}
	case "cpp":
		return []Tool{toolCXX, toolMake}
	case "go":
		return []Tool{toolGo, toolCC}
	case "go-wasm":
		return []Tool{toolGo, toolMake}
	case "rust":
		return []Tool{toolCargo, toolRustc}
	}
	return nil
}

// CheckToolchain looks up the commands lang needs on PATH. The error
// wraps ErrToolchain, names each missing command and the package that
// installs it, and ends with the apt-get command that installs them all.
func CheckToolchain(lang string) error {
	if err := CheckLanguage(lang); err != nil {
		return err
	}
	var missing []string
	var pkgs []string
	for _, t := range Tools(lang) {
		if _, err := exec.LookPath(t.Command); err == nil {
			continue
		}
		m := fmt.Sprintf("%s (Debian package %s", t.Command, t.Debian)
		if t.Other != "" {
			m += ", " + t.Other
		}
		missing = append(missing, m+")")
		pkgs = append(pkgs, t.Debian)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the %s template builds with %s, not found on PATH: install with `apt-get install %s`",
		ErrToolchain, lang, strings.Join(missing, " and "), strings.Join(pkgs, " "))
}
