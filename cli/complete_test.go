package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCompletionScripts(t *testing.T) {
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			code, out, errOut := runCLI(t, "completion", shell)
			if code != 0 || errOut != "" || !strings.Contains(out, "__complete") {
				t.Fatalf("completion %s: exit %d, stderr %q:\n%s", shell, code, errOut, out)
			}
			path, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed: the script's syntax is not checked", shell)
			}
			file := filepath.Join(t.TempDir(), "dynop."+shell)
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if msg, err := exec.Command(path, "-n", file).CombinedOutput(); err != nil {
				t.Errorf("%s -n rejects the script: %v\n%s", shell, err, msg)
			}
		})
	}
	code, out, errOut := runCLI(t, "completion", "tcsh")
	if code != 2 || out != "" || !strings.Contains(errOut, `completion: unknown shell "tcsh": want bash, zsh, fish`) || !strings.Contains(errOut, "usage: dynop completion bash|zsh|fish") {
		t.Errorf("completion tcsh: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestComplete: the hidden command the scripts run prints the candidates
// one a line, from what this binary knows: its commands and flags, and
// the operators and plugins compiled into it.
func TestComplete(t *testing.T) {
	healthyEnv(t)
	lines := func(args ...string) []string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{hiddenComplete}, args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%s %q: exit %d, stderr %q", hiddenComplete, args, code, errOut)
		}
		return strings.Fields(out)
	}
	for _, tc := range []struct {
		args       []string
		want, none []string
	}{
		{[]string{"commands"}, []string{"list", "inspect", "run", "graph", "completion", "include-dir", "help"}, []string{hiddenComplete}},
		{[]string{"flags", "run"}, []string{"--workers", "--in", "--no-fuse", "--sandbox", "--json"}, []string{"--help", "-workers"}},
		{[]string{"flags", "graph"}, []string{"--no-fuse", "--dot", "--plugin"}, []string{"--workers"}},
		{[]string{"valueflags", "run"}, []string{"--workers", "--in", "--out"}, []string{"--json", "--sandbox", "--no-fuse"}},
		{[]string{"values", "list", "--color"}, []string{"auto", "always", "never"}, nil},
		{[]string{"values", "run", "sandbox"}, []string{"prefer-native", "unsigned", "always"}, nil},
		{[]string{"values", "new", "--lang"}, []string{"c", "cpp", "go", "go-wasm", "rust"}, nil},
		{[]string{"ops"}, []string{"image.Decode", "image.Encode", "npy.Encode"}, nil},
		{[]string{"plugins"}, []string{"dynop.plugin.image"}, []string{"image.Decode"}},
		{[]string{"args", "inspect"}, []string{"image.Decode", "dynop.plugin.image"}, nil},
		{[]string{"args", "bench"}, []string{"image.Decode"}, []string{"dynop.plugin.image"}},
		{[]string{"args", "help"}, []string{"run", "list"}, nil},
		{[]string{"args", "completion"}, []string{"bash", "zsh", "fish"}, nil},
	} {
		got := lines(tc.args...)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s %q lacks %s: %q", hiddenComplete, tc.args, w, got)
			}
		}
		for _, n := range tc.none {
			if slices.Contains(got, n) {
				t.Errorf("%s %q has %s: %q", hiddenComplete, tc.args, n, got)
			}
		}
	}
	// Nothing to offer, and nothing said: files are completed instead.
	for _, args := range [][]string{{"flags", "lsit"}, {"values", "run", "--workers"}, {"values", "run", "--nope"}, {"args", "run"}, {"args", "lsit"}} {
		if got := lines(args...); len(got) != 0 {
			t.Errorf("%s %q = %q, want nothing", hiddenComplete, args, got)
		}
	}
	if code, _, errOut := runCLI(t, hiddenComplete, "everything"); code != 2 || !strings.Contains(errOut, `unknown "everything"`) {
		t.Errorf("%s everything: exit %d, %q", hiddenComplete, code, errOut)
	}
}

// dynopOnPath puts a program dynop on PATH that runs this test binary as
// cli.Main would, for the completion scripts and the checks of stderr.
func dynopOnPath(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\n" + testMainEnv + "=cli.Main exec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "dynop"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return filepath.Join(dir, "dynop")
}

// TestCompleteIsQuiet: broken plugin files on the search path, which
// other commands report, print nothing on stderr while completing.
func TestCompleteIsQuiet(t *testing.T) {
	healthyEnv(t)
	dynopExe := dynopOnPath(t)
	junk := t.TempDir()
	os.WriteFile(filepath.Join(junk, "libjunk.so"), []byte("garbage"), 0o644)
	os.WriteFile(filepath.Join(junk, "libempty.so"), nil, 0o644)
	t.Setenv("DYNOP_PLUGIN_PATH", junk)
	for _, args := range [][]string{{"ops"}, {"plugins"}, {"args", "inspect"}} {
		cmd := exec.Command(dynopExe, append([]string{hiddenComplete}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 || !strings.Contains(string(out), "dynop.plugin.image\n") && !strings.Contains(string(out), "image.Decode\n") {
			t.Errorf("%s %q with broken plugin files: %v, stderr %q, stdout %q", hiddenComplete, args, err, stderr.String(), out)
		}
	}
	// dynop list reports them, so the files are ones worth a word.
	if out, err := exec.Command(dynopExe, "list").CombinedOutput(); err == nil || !strings.Contains(string(out), "libjunk.so") {
		t.Errorf("dynop list of the broken files: %v\n%s", err, out)
	}
}

// zshHarness runs the zsh script's function outside a completion: the
// builtins it calls are stubbed to print what they would offer (compadd
// filtering by the word's prefix as zsh does, _files printing <files>),
// and words and CURRENT are those of the command line $LINE.
const zshHarness = `compdef() { : }
compset() { [[ $1 == -P ]] && PREFIX=${PREFIX#*=} }
compadd() {
    local a n=0
    [[ $1 == -a ]] || return 1
    for a in ${(P)2}; do
        if [[ $a == ${PREFIX}* ]]; then print -r -- $a; n=$((n+1)); fi
    done
    (( n > 0 ))
}
_files() { print -r -- '<files>' }
source <(dynop completion zsh)
words=(${(z)LINE})
[[ $LINE == *' ' ]] && words+=('')
CURRENT=${#words}
PREFIX=${words[CURRENT]}
_dynop
`

// TestShellCompletion runs each completion script as its shell would on
// TAB after a command line, and checks what it offers: bash's function
// with COMP_WORDS split as bash splits them, fish's complete -C, zsh's
// function in zshHarness. "<files>" stands for the shell's own file
// completion; the command lines run in a directory holding pipe.yaml.
func TestShellCompletion(t *testing.T) {
	healthyEnv(t)
	dynopOnPath(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pipe.yaml"), nil, 0o644)
	const files = "<files>"
	cases := []struct {
		line string // the command line before TAB; a trailing space starts a new word
		want []string
	}{
		{"dynop li", []string{"list"}},
		{"dynop i", []string{"inspect", "include-dir"}},
		{"dynop run --wor", []string{"--workers"}},
		{"dynop graph --no", []string{"--no-fuse"}},
		{"dynop list --color ", []string{"auto", "always", "never"}},
		{"dynop list -color al", []string{"always"}},
		{"dynop list --color=al", []string{"always"}},
		{"dynop run --sandbox=", []string{"prefer-native", "unsigned", "always"}},
		{"dynop new --lang go", []string{"go", "go-wasm"}},
		{"dynop inspect image.Dec", []string{"image.Decode"}},
		{"dynop inspect dynop.plugin.im", []string{"dynop.plugin.image"}},
		{"dynop inspect --json image.Dec", []string{"image.Decode"}},
		{"dynop bench image.Enc", []string{"image.Encode"}},
		{"dynop help gr", []string{"graph"}},
		{"dynop completion ", []string{"bash", "zsh", "fish"}},
		{"dynop run --out ", []string{files}},
		{"dynop run pi", []string{files}},
		{"dynop inspect pi", []string{files}},
	}
	run := func(t *testing.T, name string, args ...string) []string {
		t.Helper()
		path, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s is not installed", name)
		}
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	check := func(t *testing.T, line string, got, want []string) {
		t.Helper()
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("completing %q: %q, want %q", line, got, want)
		}
	}
	t.Run("bash", func(t *testing.T) {
		for _, tc := range cases {
			// bash splits words at = too; a new word is ''.
			var words []string
			for _, w := range strings.Split(tc.line, " ") {
				if a, b, ok := strings.Cut(w, "="); ok {
					words = append(words, a, "=", "'"+b+"'")
				} else {
					words = append(words, "'"+w+"'")
				}
			}
			src := "source <(dynop completion bash)\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\n" +
				"COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_dynop\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
			want := tc.want
			if slices.Equal(want, []string{files}) {
				want = nil // complete -o default: bash completes files when the function offers nothing
			}
			check(t, tc.line, run(t, "bash", "-c", src), want)
		}
	})
	t.Run("zsh", func(t *testing.T) {
		for _, tc := range cases {
			t.Setenv("LINE", tc.line)
			check(t, tc.line, run(t, "zsh", "-f", "-c", zshHarness), tc.want)
		}
	})
	t.Run("fish", func(t *testing.T) {
		for _, tc := range cases {
			got := run(t, "fish", "--no-config", "-c", "dynop completion fish | source; complete -C '"+tc.line+"'")
			if flag, _, ok := strings.Cut(tc.line[strings.LastIndex(tc.line, " ")+1:], "="); ok {
				for i, g := range got { // fish offers the whole word, --color=always
					got[i] = strings.TrimPrefix(g, flag+"=")
				}
			}
			want := tc.want
			if slices.Equal(want, []string{files}) {
				want = []string{"pipe.yaml"}
			}
			check(t, tc.line, got, want)
		}
	})
}

// Only words a shell would not expand are offered: a plugin's name that
// got past validation with $(…) or a backquote in it is left out.
func TestShellSafe(t *testing.T) {
	for s, want := range map[string]bool{
		"image.Resize": true, "dynop.plugin.imgproc": true, "--workers": true, "--color=always": true,
		"": false, "$(reboot)": false, "a`b`": false, "x;y": false, "a b": false, "*": false, "~root": false,
	} {
		if got := shellSafe(s); got != want {
			t.Errorf("shellSafe(%q) = %v, want %v", s, got, want)
		}
	}
}
