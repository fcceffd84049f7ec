package dynop

import (
	"fmt"
	"strings"
)

// SandboxPolicy says when a plugin must run in a sandbox: which build of
// a plugin runs when a native build and a sandboxed (WebAssembly) one are
// both found. It chooses between loaders, so the host keeps it; how the
// sandbox itself runs (memory, deadlines, capabilities) is the loader's
// own configuration, such as
// [github.com/dynop/dynop/loader/wasm.Config].
type SandboxPolicy int

const (
	// SandboxPreferNative runs a plugin's native build when it is
	// supported on this machine and trusted — its signature verifies, or
	// signatures are not checked — and its WebAssembly build otherwise.
	SandboxPreferNative SandboxPolicy = iota
	// SandboxUnsigned runs native builds only if their signature
	// verifies against the trust store: a plugin that is not signed runs
	// in the sandbox, or, without a WebAssembly build, not at all.
	SandboxUnsigned
	// SandboxAlways runs WebAssembly builds only; native plugin files
	// are never loaded. Go plugins compiled into the program still run.
	SandboxAlways
)

var sandboxPolicyNames = [...]string{"prefer-native", "unsigned", "always"}

// String returns the policy's name, as ParseSandboxPolicy reads it.
func (p SandboxPolicy) String() string {
	if p >= 0 && int(p) < len(sandboxPolicyNames) {
		return sandboxPolicyNames[p]
	}
	return fmt.Sprintf("SandboxPolicy(%d)", int(p))
}

// ParseSandboxPolicy reads a policy by name: "prefer-native" (also "off"
// and "native"), "unsigned", or "always" (also "on" and "true").
func ParseSandboxPolicy(s string) (SandboxPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "prefer-native", "off", "native", "false":
		return SandboxPreferNative, nil
	case "unsigned":
		return SandboxUnsigned, nil
	case "always", "on", "true":
		return SandboxAlways, nil
	}
	return 0, fmt.Errorf("sandbox policy %q: want prefer-native, unsigned or always", s)
}

// applySandboxPolicy makes a native plugin file that policy does not let
// run unusable: every one under SandboxAlways, one without a verified
// signature under SandboxUnsigned.
func (h *Host) applySandboxPolicy(rec *record, policy SandboxPolicy) {
	if rec.sandboxed || rec.path == "" || !rec.state.Usable() {
		return
	}
	switch {
	case policy == SandboxAlways:
		h.setState(rec, StateUnsupported, fmt.Errorf("%w: plugin file %s is native, and this host runs plugin files only in the WebAssembly sandbox (sandbox policy always)", ErrUnsupported, rec.path))
	case policy == SandboxUnsigned && rec.signer == "":
		h.setState(rec, StateUntrusted, fmt.Errorf("%w: plugin file %s is native and not signed by a trusted key, and this host runs unsigned plugins only in the WebAssembly sandbox (sandbox policy unsigned)", ErrSignature, rec.path))
	}
}

// buildRank orders usable plugins with one ID, best first: Go plugins
// compiled in, then native builds that are trusted, then sandboxed
// builds, then native builds whose signature did not verify (loaded
// under signature policy warn). Among equals the search path decides.
func buildRank(r *record) int {
	switch {
	case r.path == "":
		return 0
	case !r.sandboxed && !r.unverified:
		return 1
	case r.sandboxed:
		return 2
	}
	return 3
}

// buildChoice says why win was chosen over lose, another usable build of
// its plugin that buildRank puts after it.
func buildChoice(win, lose *record) string {
	switch {
	case win.path == "":
		return "a plugin compiled into the program is preferred to plugin files"
	case win.sandboxed:
		return "the native build's signature does not verify, so the sandboxed build is preferred"
	case !lose.sandboxed:
		return "its signature verifies, and this one's does not"
	}
	return "a native build is preferred to the sandbox when it is supported and not untrusted (sandbox policy prefer-native or unsigned)"
}

// validate reports a policy that is none of the three.
func (p SandboxPolicy) validate() error {
	if p < SandboxPreferNative || p > SandboxAlways {
		return fmt.Errorf("dynop: Options.Sandbox: unknown policy %d", int(p))
	}
	return nil
}
