package cli

import (
	"flag"
	"fmt"
	"os"

	"github.com/dynop/dynop"
)

// sandboxFlag is --sandbox[=POLICY]: bare, it means always.
type sandboxFlag struct {
	set    bool
	policy dynop.SandboxPolicy
}

func (f *sandboxFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.policy.String()
}

func (f *sandboxFlag) Set(s string) error {
	p, err := dynop.ParseSandboxPolicy(s)
	if err != nil {
		return err
	}
	f.set, f.policy = true, p
	return nil
}

// IsBoolFlag lets --sandbox stand alone (meaning "true": always).
func (f *sandboxFlag) IsBoolFlag() bool { return true }

// sandbox is the --sandbox flag of the command being run; command resets
// it.
var sandbox sandboxFlag

// addSandboxFlag gives a command that opens a host the --sandbox flag.
func addSandboxFlag(fs *flag.FlagSet) {
	fs.Var(&sandbox, "sandbox", "run plugin files in the WebAssembly sandbox: bare or `always` (wasm builds only), unsigned (native only if signed), prefer-native (default); $DYNOP_SANDBOX too")
}

// sandboxPolicy returns the policy of --sandbox, else $DYNOP_SANDBOX.
func sandboxPolicy() (dynop.SandboxPolicy, error) {
	if sandbox.set {
		return sandbox.policy, nil
	}
	if s := os.Getenv("DYNOP_SANDBOX"); s != "" {
		p, err := dynop.ParseSandboxPolicy(s)
		if err != nil {
			return 0, fmt.Errorf("DYNOP_SANDBOX: %w", err)
		}
		return p, nil
	}
	return dynop.SandboxPreferNative, nil
}
