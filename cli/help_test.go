package cli

import (
	"flag"
	"regexp"
	"strings"
	"testing"
)

// TestCommandHelp: dynop CMD --help, dynop CMD -h and dynop help CMD print
// that command's help on stdout and exit 0, for every command.
func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		var first string
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {c.name, "-help"}, {"help", c.name}} {
			code, out, errOut := runCLI(t, args...)
			if code != 0 || errOut != "" {
				t.Errorf("dynop %q: exit %d, stderr %q; want 0 and nothing on stderr", args, code, errOut)
				continue
			}
			if !strings.HasPrefix(out, "Usage: dynop "+c.name) || !strings.Contains(out, strings.Fields(c.doc)[0]) {
				t.Errorf("dynop %q: not %s's help:\n%s", args, c.name, out)
			}
			if strings.Contains(out, "Commands:") {
				t.Errorf("dynop %q printed the global help:\n%s", args, out)
			}
			if first == "" {
				first = out
			} else if out != first {
				t.Errorf("dynop %q printed another help than dynop %s --help:\n%s", args, c.name, out)
			}
		}
	}
	// --help after the arguments, as flags may be.
	code, out, _ := runCLI(t, "run", "pipeline.yaml", "--help")
	if code != 0 || !strings.HasPrefix(out, "Usage: dynop run [flags] PIPELINE.yaml\n") {
		t.Errorf("run pipeline.yaml --help: exit %d\n%s", code, out)
	}
	// The flags of new, with their placeholders and what they take.
	code, out, _ = runCLI(t, "new", "--help")
	for _, want := range []string{"Usage: dynop new --lang LANG [flags] NAME", "\n  --lang LANG ", "\n  --no-check ", "c, cpp, go, go-wasm, rust", "Example:\n  dynop new --lang c blur"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("new --help: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
}

func TestGlobalHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"-help"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: dynop <command>") || !strings.Contains(out, "\nCommands:\n") {
			t.Errorf("dynop %q: exit %d, stderr %q, stdout:\n%s", args, code, errOut, out)
		}
	}
	code, out, errOut := runCLI(t)
	if code != 2 || out != "" || !strings.HasPrefix(errOut, "dynop: no command given\n\nUsage: dynop <command>") || !strings.Contains(errOut, "\nCommands:\n") {
		t.Errorf("dynop: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if strings.Contains(globalUsage(), hiddenComplete) {
		t.Errorf("the global usage shows the hidden %s", hiddenComplete)
	}
}

// TestEveryFlagInHelp: every flag a command defines is in its own help
// and in its entry of the global usage, double-dashed with its
// placeholder, and every flag that takes a value has a placeholder of
// its own (flagPlaceholders), not package flag's type name.
func TestEveryFlagInHelp(t *testing.T) {
	global := globalUsage()
	for _, c := range commands {
		fs := commandFlags(c.name)
		if fs == nil {
			t.Errorf("%s: no flags: does it parse them before doing anything?", c.name)
			continue
		}
		_, help, _ := runCLI(t, "help", c.name)
		entry := globalEntry(t, global, c.name)
		fs.VisitAll(func(f *flag.Flag) {
			spec := flagSpec(c.name, f)
			if !regexp.MustCompile(`\n  ` + regexp.QuoteMeta(spec) + `  `).MatchString(help) {
				t.Errorf("%s --help lacks %q in its flags:\n%s", c.name, spec, help)
			}
			if !strings.Contains(entry, spec) {
				t.Errorf("the global usage's %s lacks %q:\n%s", c.name, spec, entry)
			}
			if value, optional := flagKind(f); value || optional {
				_, own := flagPlaceholders[c.name+"."+f.Name]
				if _, all := flagPlaceholders[f.Name]; !own && !all {
					t.Errorf("%s --%s takes a value but has no placeholder in flagPlaceholders", c.name, f.Name)
				}
			}
			if strings.Contains(help, "`") {
				t.Errorf("%s --help shows a back quote:\n%s", c.name, help)
			}
		})
	}
	// The flags issue 28 found misprinted or missing.
	for _, want := range []string{"[--sandbox[=POLICY]]", "[--workers N]", "[--in [NAME=]PATH]...", "[--shard I/N]"} {
		if !strings.Contains(globalEntry(t, global, "run"), want) {
			t.Errorf("global usage's run lacks %s", want)
		}
	}
	if !strings.Contains(globalEntry(t, global, "graph"), "[--no-fuse]") {
		t.Errorf("global usage's graph lacks --no-fuse:\n%s", global)
	}
	if strings.Contains(global, "-sandbox always") {
		t.Errorf("global usage has package flag's placeholder quirk:\n%s", global)
	}
}

// globalEntry returns the lines of the global usage that describe cmd.
func globalEntry(t *testing.T, global, cmd string) string {
	t.Helper()
	i := strings.Index(global, "\n  "+cmd+" ")
	if i < 0 {
		i = strings.Index(global, "\n  "+cmd+"\n")
	}
	if i < 0 {
		t.Fatalf("the global usage has no entry for %s:\n%s", cmd, global)
	}
	rest := global[i+1:]
	if j := regexp.MustCompile(`\n  \S`).FindStringIndex(rest); j != nil {
		rest = rest[:j[0]]
	}
	return rest
}

func TestUsageErrorsShowTheCommandsUsage(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want      string
		usageLine string // the start of the short usage that follows
	}{
		{[]string{"run"}, "dynop: run takes one pipeline file, got 0 arguments\n", "usage: dynop run [--atomic]"},
		{[]string{"run", "--worker", "2", "p.yaml"}, "dynop: run: flag provided but not defined: --worker (did you mean --workers?)\n", "usage: dynop run "},
		{[]string{"run", "-worker", "2", "p.yaml"}, "flag provided but not defined: --worker (did you mean --workers?)", "usage: dynop run "},
		{[]string{"list", "--jsno"}, "list: flag provided but not defined: --jsno (did you mean --json?)", "usage: dynop list "},
		{[]string{"list", "--yaml"}, "list: flag provided but not defined: --yaml\n", "usage: dynop list "},
		{[]string{"manifest", "--json", "x"}, "manifest: flag provided but not defined: --json (manifest takes no flags)", "usage: dynop manifest PLUGIN..."},
		{[]string{"run", "--workers"}, "run: flag needs an argument: --workers\n", "usage: dynop run "},
		{[]string{"run", "--workers", "many", "p.yaml"}, `run: invalid value "many" for flag --workers`, "usage: dynop run "},
		{[]string{"version", "now"}, `version takes no arguments, got ["now"]`, "usage: dynop version [--json]"},
		{[]string{"help", "lsit"}, `dynop: unknown command "lsit" (did you mean "list"?)`, "usage: dynop help [COMMAND]"},
		{[]string{"help", "run", "graph"}, `help takes one command, got 2`, "usage: dynop help [COMMAND]"},
		{[]string{"completion"}, "completion takes one shell: bash, zsh, fish", "usage: dynop completion bash|zsh|fish"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "dynop: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("dynop %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
			continue
		}
		if !strings.Contains(errOut, "\n\n"+tc.usageLine) || !strings.Contains(errOut, "Run 'dynop help "+tc.args[0]+"'") {
			t.Errorf("dynop %q: stderr lacks the short usage %q:\n%s", tc.args, tc.usageLine, errOut)
		}
		if strings.Contains(errOut, "Commands:") || strings.Contains(errOut, "usage: usage") {
			t.Errorf("dynop %q: stderr has the global help or a doubled prefix:\n%s", tc.args, errOut)
		}
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"lsit", `dynop: unknown command "lsit" (did you mean "list"?)` + "\n"},
		{"inspcet", `(did you mean "inspect"?)`},
		{"verison", `(did you mean "version"?)`},
		{"complete", `(did you mean "completion"?)`},
		{"frobnicate", `dynop: unknown command "frobnicate"` + "\n"},
	} {
		code, out, errOut := runCLI(t, tc.cmd)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "Run 'dynop help' for the commands.") {
			t.Errorf("dynop %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.cmd, code, out, errOut, tc.want)
		}
	}
}

func TestFlagSpec(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("json", false, "")
	fs.Int("workers", 0, "")
	fs.String("mystery", "", "the `THING` to use")
	fs.Duration("wait", 0, "")
	addSandboxFlag(fs)
	for name, want := range map[string]string{
		"json": "--json", "workers": "--workers N", "mystery": "--mystery THING", "wait": "--wait DURATION", "sandbox": "--sandbox[=POLICY]",
	} {
		if got := flagSpec("x", fs.Lookup(name)); got != want {
			t.Errorf("flagSpec(%s) = %q, want %q", name, got, want)
		}
	}
	keygen := commandFlags("keygen")
	if got := flagSpec("keygen", keygen.Lookup("out")); got != "--out PREFIX" {
		t.Errorf("keygen's --out: %q, want its own placeholder PREFIX", got)
	}
}

func TestWrap(t *testing.T) {
	got := wrap(strings.Fields("aaa bbb ccc ddd"), "> ", "  ", 9)
	if want := "> aaa bbb\n  ccc ddd\n"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	got = wrap([]string{"averyveryverylongword", "b"}, "", "", 5)
	if want := "averyveryverylongword\nb\n"; got != want {
		t.Errorf("wrap of a long word = %q, want %q", got, want)
	}
}
