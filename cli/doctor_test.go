package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/scaffold"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/sign"
)

// healthyEnv clears the variables doctor checks (TestMain points the XDG
// directories at a temporary home).
func healthyEnv(t *testing.T) {
	t.Helper()
	for _, v := range []string{"DYNOP_PLUGIN_PATH", "DYNOP_TRUST_DIR", "DYNOP_SIGNATURE_POLICY", "DYNOP_SANDBOX", "DYNOP_SANDBOX_GRANT", "DYNOP_WASM_ENGINE",
		dispatch.EnvFeatures, dispatch.EnvVerify} {
		t.Setenv(v, "")
	}
}

// doctorJSON runs dynop doctor --json and returns its exit status and
// checks, which must each have a fix unless they are ok.
func doctorJSON(t *testing.T) (int, []checkResult, string) {
	t.Helper()
	code, out, errOut := runCLI(t, "doctor", "--json")
	var doc struct {
		Schema string
		Checks []checkResult
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("doctor --json: exit %d, not JSON: %v\n%s%s", code, err, out, errOut)
	}
	if doc.Schema != doctorSchema || len(doc.Checks) < len(doctorChecks) {
		t.Fatalf("doctor --json: schema %q, %d checks", doc.Schema, len(doc.Checks))
	}
	for _, c := range doc.Checks {
		if (c.Status == statusOK) != (c.Fix == "") {
			t.Errorf("check %q is %s with fix %q: want a fix exactly when it is not ok", c.Name, c.Status, c.Fix)
		}
		if c.Status != statusOK && c.Status != statusWarn && c.Status != statusFail {
			t.Errorf("check %q: status %q", c.Name, c.Status)
		}
	}
	return code, doc.Checks, errOut
}

// findCheck returns the first check called name whose summary contains
// about.
func findCheck(t *testing.T, checks []checkResult, name, about string) checkResult {
	t.Helper()
	for _, c := range checks {
		if c.Name == name && strings.Contains(c.Summary, about) {
			return c
		}
	}
	t.Fatalf("no %q check about %q in %+v", name, about, checks)
	return checkResult{}
}

// fakeToolchains puts do-nothing programs named like every command the
// dynop new templates build with first on PATH, so that the toolchains
// check is ok whatever this machine has.
func fakeToolchains(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, lang := range scaffold.Languages {
		for _, tool := range scaffold.Tools(lang) {
			if err := os.WriteFile(filepath.Join(dir, tool.Command), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestDoctorHealthy(t *testing.T) {
	healthyEnv(t)
	fakeToolchains(t)
	code, out, errOut := runCLI(t, "doctor")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, name := range []string{"search path", "plugins", "cache", "trust store", "signature policy", "cpu features", "verify variants", "gpu", "sandbox", "toolchains"} {
		if !regexp.MustCompile(`(?m)^ok +` + name + ` {2,}\S`).MatchString(out) {
			t.Errorf("no ok line for %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "fix:") || strings.Contains(out, "\x1b") || !strings.HasSuffix(out, " 0 warnings, 0 failures\n") {
		t.Errorf("a healthy environment:\n%s", out)
	}
	for _, want := range []string{"DYNOP_TRUST_DIR is not set: plugin signatures are not checked", "dynop keygen", "prefer-native (the default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	code, checks, _ := doctorJSON(t)
	if code != 0 {
		t.Errorf("doctor --json: exit %d", code)
	}
	for _, c := range checks {
		if c.Status != statusOK {
			t.Errorf("check %+v is not ok", c)
		}
	}
	if _, out, _ := runCLI(t, "doctor", "--color=always"); !strings.Contains(out, "\x1b[32mok\x1b[0m") {
		t.Errorf("doctor --color=always: ok is not green:\n%q", out)
	}
}

// Without compilers on PATH, the toolchains check warns, naming for each
// language the package that installs what is missing; dynop itself still
// works, so the exit status is 0.
func TestDoctorToolchains(t *testing.T) {
	healthyEnv(t)
	t.Setenv("PATH", t.TempDir())
	code, checks, _ := doctorJSON(t)
	if code != 0 {
		t.Errorf("exit %d, want 0: a missing toolchain is a warning", code)
	}
	c := findCheck(t, checks, "toolchains", "no template")
	if c.Status != statusWarn || !strings.Contains(c.Fix, "dynop new --lang") {
		t.Errorf("toolchains: %+v", c)
	}
	details := strings.Join(c.Details, "\n")
	for _, want := range []string{"the c template", "apt-get install gcc make", "the rust template", "apt-get install cargo rustc", "the go template"} {
		if !strings.Contains(details, want) {
			t.Errorf("toolchains details lack %q:\n%s", want, details)
		}
	}
}

func TestDoctorMissingPluginPathDir(t *testing.T) {
	healthyEnv(t)
	missing := filepath.Join(t.TempDir(), "nowhere")
	t.Setenv("DYNOP_PLUGIN_PATH", missing)
	code, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "search path", missing)
	if c.Status != statusWarn || !strings.Contains(c.Summary, "does not exist") ||
		!strings.Contains(c.Fix, "create "+missing) || !strings.Contains(c.Fix, "DYNOP_PLUGIN_PATH") {
		t.Errorf("missing $DYNOP_PLUGIN_PATH entry: %+v", c)
	}
	if code != 0 {
		t.Errorf("exit %d for a warning; want 0", code)
	}
	code, out, _ := runCLI(t, "doctor")
	if code != 0 || !regexp.MustCompile(`(?m)^warn +search path +`+regexp.QuoteMeta(missing)+` .*\n +fix: create `+regexp.QuoteMeta(missing)).MatchString(out) {
		t.Errorf("exit %d, report:\n%s", code, out)
	}
}

func TestDoctorBrokenPluginFile(t *testing.T) {
	healthyEnv(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "libjunk.so")
	if err := os.WriteFile(junk, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a plugin"), 0o644)
	t.Setenv("DYNOP_PLUGIN_PATH", dir)
	code, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "search path", dir)
	if c.Status != statusWarn || !strings.Contains(c.Summary, "1 plugin file: 0 usable, 1 broken") ||
		len(c.Details) != 1 || !strings.HasPrefix(c.Details[0], junk+": broken: ") || !strings.Contains(c.Fix, "rebuild") {
		t.Errorf("broken plugin file: %+v", c)
	}
	if p := findCheck(t, checks, "plugins", ""); p.Status != statusOK || !strings.Contains(p.Summary, "1 from files") {
		t.Errorf("plugins: %+v", p)
	}
	if code != 0 {
		t.Errorf("exit %d for a warning; want 0", code)
	}
}

func TestDoctorInvalidCPUFeatures(t *testing.T) {
	healthyEnv(t)
	t.Setenv(dispatch.EnvFeatures, "-avx2,-avx9000")
	code, checks, errOut := doctorJSON(t)
	c := findCheck(t, checks, "cpu features", "")
	known := dispatch.KnownFor(runtime.GOARCH)
	if c.Status != statusFail || !strings.Contains(c.Summary, `"avx9000"`) || len(known) > 0 && !strings.Contains(c.Summary, strings.Join(known, ", ")) ||
		!strings.Contains(c.Fix, dispatch.EnvFeatures) {
		t.Errorf("invalid %s: %+v; want a fail naming avx9000 and listing %v", dispatch.EnvFeatures, c, known)
	}
	if p := findCheck(t, checks, "plugins", ""); p.Status != statusFail || !strings.Contains(p.Summary, "avx9000") {
		t.Errorf("plugins: %+v; want a fail: no host opens", p)
	}
	if code != 1 || !strings.Contains(errOut, "cpu features") {
		t.Errorf("exit %d, %q; want 1 naming the failed check", code, errOut)
	}
}

func TestDoctorTurnedOffCPUFeatures(t *testing.T) {
	if !dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Skip("this CPU has no AVX2 to turn off")
	}
	healthyEnv(t)
	t.Setenv(dispatch.EnvFeatures, "-avx2")
	code, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "cpu features", "")
	if code != 0 || c.Status != statusOK || strings.Contains(c.Summary, " avx2 ") || len(c.Details) == 0 || !strings.Contains(c.Details[0], "turned off by DYNOP_CPU_FEATURES") {
		t.Errorf("exit %d, %+v", code, c)
	}
}

func TestDoctorInvalidSettings(t *testing.T) {
	for _, tc := range []struct {
		env, value, check string
		allowed           []string
	}{
		{"DYNOP_SIGNATURE_POLICY", "strict", "signature policy", []string{"off", "warn", "require"}},
		{"DYNOP_SANDBOX", "maybe", "sandbox", []string{"prefer-native", "unsigned", "always"}},
		{"DYNOP_SANDBOX_GRANT", "clock,network", "sandbox", []string{"clock", "random", "env", "stdio"}},
		{"DYNOP_WASM_ENGINE", "v8", "sandbox", wasm.Engines()},
		{dispatch.EnvVerify, "perhaps", "verify variants", []string{"1", "0"}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			healthyEnv(t)
			t.Setenv(tc.env, tc.value)
			code, checks, errOut := doctorJSON(t)
			c := findCheck(t, checks, tc.check, "")
			if c.Status != statusFail || !strings.Contains(c.Summary, tc.value) || !strings.Contains(c.Fix, tc.env) {
				t.Errorf("%s=%s: %+v", tc.env, tc.value, c)
			}
			for _, a := range tc.allowed {
				if !strings.Contains(c.Fix, a) {
					t.Errorf("%s=%s: the fix %q does not say %q is allowed", tc.env, tc.value, c.Fix, a)
				}
			}
			if code != 1 || !strings.Contains(errOut, tc.check) {
				t.Errorf("exit %d, %q; want 1 naming %s", code, errOut, tc.check)
			}
		})
	}
}

func TestDoctorPolicyWithoutTrustStore(t *testing.T) {
	healthyEnv(t)
	t.Setenv("DYNOP_SIGNATURE_POLICY", "require")
	code, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "signature policy", "")
	if code != 0 || c.Status != statusWarn || !strings.Contains(c.Summary, "require") || !strings.Contains(c.Fix, "DYNOP_TRUST_DIR") {
		t.Errorf("exit %d, %+v", code, c)
	}
}

func TestDoctorTrustStore(t *testing.T) {
	healthyEnv(t)
	dir := t.TempDir()
	_, _, id, err := sign.GenerateKeyFiles(filepath.Join(dir, "publisher"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DYNOP_TRUST_DIR", dir)
	code, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "trust store", "")
	if code != 0 || c.Status != statusOK || !strings.Contains(c.Summary, "1 trusted key") || len(c.Details) != 1 || !strings.Contains(c.Details[0], id) {
		t.Errorf("a good trust store: exit %d, %+v", code, c)
	}
	if p := findCheck(t, checks, "signature policy", ""); p.Status != statusOK || !strings.HasPrefix(p.Summary, "require (the default with a trust store)") {
		t.Errorf("signature policy with a trust store: %+v", p)
	}

	bad := filepath.Join(dir, "bad.pub")
	if err := os.WriteFile(bad, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, checks, errOut := doctorJSON(t)
	c = findCheck(t, checks, "trust store", "")
	if c.Status != statusFail || !strings.Contains(c.Summary, "1 key file cannot be read") || !strings.Contains(c.Fix, bad) ||
		!strings.Contains(strings.Join(c.Details, "\n"), bad+": ") {
		t.Errorf("a bad key file: %+v", c)
	}
	if code != 1 || !strings.Contains(errOut, "trust store") {
		t.Errorf("a bad key file: exit %d, %q; want 1", code, errOut)
	}

	empty := t.TempDir()
	t.Setenv("DYNOP_TRUST_DIR", empty)
	_, checks, _ = doctorJSON(t)
	if c := findCheck(t, checks, "trust store", ""); c.Status != statusWarn || !strings.Contains(c.Summary, "no keys") || !strings.Contains(c.Fix, empty) {
		t.Errorf("an empty trust store: %+v", c)
	}

	missing := filepath.Join(empty, "missing")
	t.Setenv("DYNOP_TRUST_DIR", missing)
	code, checks, _ = doctorJSON(t)
	if c := findCheck(t, checks, "trust store", ""); code != 1 || c.Status != statusFail || !strings.Contains(c.Summary, "does not exist") || !strings.Contains(c.Fix, "create "+missing) {
		t.Errorf("a missing trust store: exit %d, %+v", code, c)
	}
}

func TestDoctorCache(t *testing.T) {
	healthyEnv(t)
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	cache := filepath.Join(home, "dynop")
	_, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "cache", "")
	if c.Status != statusOK || c.Summary != cache+": not there yet; made at first use" {
		t.Errorf("no cache yet: %+v", c)
	}
	if err := os.MkdirAll(filepath.Join(cache, "wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cache, "wasm", "module"), make([]byte, 1500), 0o644)
	_, checks, _ = doctorJSON(t)
	c = findCheck(t, checks, "cache", "")
	if c.Status != statusOK || c.Summary != cache+": writable, 1.5 kB (no registry cache yet; WebAssembly compilation cache 1.5 kB)" {
		t.Errorf("cache: %+v", c)
	}

	file := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", file)
	if err := os.WriteFile(filepath.Join(file, "dynop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, checks, _ := doctorJSON(t)
	c = findCheck(t, checks, "cache", "")
	if code != 0 || c.Status != statusWarn || !strings.Contains(c.Summary, "not a directory") || !strings.Contains(c.Fix, filepath.Join(file, "dynop")) {
		t.Errorf("a cache that is a file: exit %d, %+v", code, c)
	}
}

func TestDoctorUsage(t *testing.T) {
	code, _, errOut := runCLI(t, "doctor", "now")
	if code != 2 || !strings.Contains(errOut, "doctor takes no arguments") {
		t.Errorf("doctor now: exit %d, %q", code, errOut)
	}
	if _, out, _ := runCLI(t, "help"); !strings.Contains(out, "doctor [--color WHEN] [--json]") {
		t.Errorf("help does not show doctor:\n%s", out)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 4100: "4.1 kB", 12_345_678: "12.3 MB", 2e12: "2.0 TB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
