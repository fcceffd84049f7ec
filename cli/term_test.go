package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// ansi matches the SGR sequences the palette writes.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

func TestColorModeFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want colorMode
	}{{"auto", colorAuto}, {"always", colorAlways}, {"never", colorNever}, {"ALWAYS", colorAlways}} {
		var m colorMode
		if err := m.Set(tc.in); err != nil || m != tc.want || m.String() != strings.ToLower(tc.in) {
			t.Errorf("Set(%q): %v, %v (%s); want %v", tc.in, err, m, m.String(), tc.want)
		}
	}
	var m colorMode
	if err := m.Set("yes"); err == nil || !strings.Contains(err.Error(), "want auto, always or never") {
		t.Errorf(`Set("yes") = %v; want an error listing the values`, err)
	}
	code, out, errOut := runCLI(t, "list", "--color=sometimes")
	if code != 2 || out != "" || !strings.Contains(errOut, `"sometimes": want auto, always or never`) {
		t.Errorf("list --color=sometimes: exit %d, %q, %q; want a usage error listing the values", code, out, errOut)
	}
}

func TestColorOn(t *testing.T) {
	for _, tc := range []struct {
		mode             colorMode
		terminal         bool
		noColor, termVar string
		want             bool
	}{
		{colorAuto, true, "", "xterm-256color", true},
		{colorAuto, false, "", "xterm-256color", false},
		{colorAuto, true, "1", "xterm-256color", false},
		{colorAuto, true, "", "dumb", false},
		{colorAuto, true, "", "", true},
		{colorAlways, false, "1", "dumb", true},
		{colorNever, true, "", "xterm", false},
	} {
		t.Setenv("NO_COLOR", tc.noColor)
		t.Setenv("TERM", tc.termVar)
		if got := colorOn(tc.mode, tc.terminal); got != tc.want {
			t.Errorf("colorOn(%s, terminal %v) with NO_COLOR=%q TERM=%q = %v, want %v", &tc.mode, tc.terminal, tc.noColor, tc.termVar, got, tc.want)
		}
	}
}

func TestOnlyTerminalsAreTerminals(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, w := range []io.Writer{&bytes.Buffer{}, f, (*os.File)(nil)} {
		if isTerminal(w) || colorWanted(w, colorAuto) {
			t.Errorf("%T is taken for a terminal", w)
		}
		if !colorWanted(w, colorAlways) {
			t.Errorf("--color=always does not colour a %T", w)
		}
	}
}

func TestPaint(t *testing.T) {
	on, off := palette{on: true}, palette{}
	if got := on.paint("broken", styleRed); got != "\x1b[31mbroken\x1b[0m" {
		t.Errorf("paint = %q", got)
	}
	for _, got := range []string{off.paint("broken", styleRed), on.paint("broken", stylePlain)} {
		if got != "broken" {
			t.Errorf("unpainted text = %q", got)
		}
	}
	if got := on.paint("", styleBold); got != "" {
		t.Errorf("empty text painted: %q", got)
	}
	for s, want := range map[dynop.State]style{
		dynop.StateAvailable: styleGreen, dynop.StateStarted: styleCyan, dynop.StateUnsupported: styleYellow,
		dynop.StateBroken: styleRed, dynop.StateUntrusted: styleRed, dynop.StateDuplicate: styleDim,
	} {
		if got := stateStyle(s); got != want {
			t.Errorf("stateStyle(%s) = %q, want %q", s, got, want)
		}
	}
}

// tabwriterOutput lays rows out with the tabwriter the CLI used before.
func tabwriterOutput(rows [][]cell) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, tablePadding, ' ', 0)
	for _, row := range rows {
		texts := make([]string, len(row))
		for i, c := range row {
			texts[i] = c.text
		}
		fmt.Fprintln(tw, strings.Join(texts, "\t"))
	}
	tw.Flush()
	return b.String()
}

// randomRows makes tables of every shape: rows of 0 to 4 cells, empty
// cells, multibyte text, random styles.
func randomRows(rng *rand.Rand) [][]cell {
	words := []string{"", "a", "ok", "plugin", "dynop.plugin.greeter", "1.0.0", "avx512 — wide", "größe", "  * scalar", "x"}
	styles := []style{stylePlain, styleBold, styleRed, styleGreen, styleDim}
	rows := make([][]cell, rng.IntN(8))
	for i := range rows {
		rows[i] = make([]cell, rng.IntN(5))
		for j := range rows[i] {
			rows[i][j] = cell{text: words[rng.IntN(len(words))], style: styles[rng.IntN(len(styles))]}
		}
	}
	return rows
}

func TestTableLaysOutAsTabwriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		rows := randomRows(rng)
		var b bytes.Buffer
		if err := (&table{rows: rows}).write(&b, palette{}); err != nil {
			t.Fatal(err)
		}
		if want := tabwriterOutput(rows); b.String() != want {
			t.Fatalf("rows %q:\ntable:\n%s\ntabwriter:\n%s", rows, b.String(), want)
		}
	}
}

func TestTableStaysAlignedInColour(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	painted := 0
	for range 2000 {
		rows := randomRows(rng)
		var plain, colour bytes.Buffer
		tab := &table{rows: rows}
		if err := tab.write(&plain, palette{}); err != nil {
			t.Fatal(err)
		}
		if err := tab.write(&colour, palette{on: true}); err != nil {
			t.Fatal(err)
		}
		if colour.String() != plain.String() {
			painted++
		}
		if got := stripANSI(colour.String()); got != plain.String() {
			t.Fatalf("rows %q: in colour, less the escapes:\n%s\nplain:\n%s", rows, got, plain.String())
		}
	}
	if painted == 0 {
		t.Fatal("no table was painted")
	}
}

// columnStarts returns where each cell of each line of a table starts, in
// runes, given the cells' texts.
func columnStarts(t *testing.T, out string, rows [][]string) [][]int {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(rows), out)
	}
	starts := make([][]int, len(rows))
	for i, line := range lines {
		pos := 0
		for _, text := range rows[i] {
			j := strings.Index(line[pos:], text)
			if j < 0 {
				t.Fatalf("line %q lacks %q after byte %d", line, text, pos)
			}
			starts[i] = append(starts[i], utf8.RuneCountInString(line[:pos+j]))
			pos += j + len(text)
		}
	}
	return starts
}

// TestListColour lists a broken, a duplicate and a usable plugin in
// colour: the states are painted, and once the escapes are taken out the
// columns are where they are without colour.
func TestListColour(t *testing.T) {
	plugins := []dynop.PluginStatus{
		{Info: schema.Plugin{ID: "acme.plugin.a"}, Path: "/p/liba.so", State: dynop.StateAvailable},
		{Info: schema.Plugin{ID: "acme.plugin.broken.long"}, Path: "/p/libb.so", State: dynop.StateBroken, Err: fmt.Errorf("it is empty")},
		{Info: schema.Plugin{ID: "acme.plugin.c"}, Path: "/p/libc.so", State: dynop.StateDuplicate, DuplicateOf: "/q/libc.so"},
		{Info: schema.Plugin{ID: "acme.plugin.d"}, Path: "/p/libd.so", State: dynop.StateUntrusted, Err: fmt.Errorf("not signed")},
	}
	var plain, colour bytes.Buffer
	if err := writePlugins(&plain, plugins, false, palette{}); err != nil {
		t.Fatal(err)
	}
	if err := writePlugins(&colour, plugins, false, palette{on: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\x1b[1mPLUGIN\x1b[0m", "\x1b[32mavailable\x1b[0m", "\x1b[31mbroken\x1b[0m", "\x1b[2mduplicate\x1b[0m", "\x1b[31muntrusted\x1b[0m"} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("coloured list lacks %q:\n%q", want, colour.String())
		}
	}
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("uncoloured list has escapes:\n%q", plain.String())
	}
	if got := stripANSI(colour.String()); got != plain.String() {
		t.Fatalf("coloured list, less the escapes:\n%s\nuncoloured:\n%s", got, plain.String())
	}
	// The STATE and DETAILS columns line up under their headers.
	rows := [][]string{{"PLUGIN", "VERSION", "STATE", "DETAILS"}}
	for _, st := range plugins {
		rows = append(rows, []string{st.Info.ID, st.Info.Version.String(), st.State.String(), "path "})
		switch {
		case st.State == dynop.StateDuplicate:
			rows = append(rows, []string{"using "})
		case st.Err != nil:
			rows = append(rows, []string{"why "})
		}
	}
	starts := columnStarts(t, stripANSI(colour.String()), rows)
	for i, s := range starts {
		if len(s) == 4 && (s[2] != starts[0][2] || s[3] != starts[0][3]) {
			t.Errorf("line %d: state at %d, details at %d; the headers are at %d and %d", i, s[2], s[3], starts[0][2], starts[0][3])
		}
		if len(s) == 1 && s[0] != starts[0][3] {
			t.Errorf("line %d: a detail at %d; DETAILS is at %d", i, s[0], starts[0][3])
		}
	}
}

// TestColourFlagOfCommands runs list, list --ops and inspect in both
// forms with --color=always and never: the same text less the escapes,
// and escapes only with always. Output to a buffer is never coloured by
// default, whatever NO_COLOR and TERM say.
func TestColourFlagOfCommands(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	for _, args := range [][]string{{"list"}, {"list", "--ops"}, {"inspect", "dynop.plugin.image"}, {"inspect", "image.Resize"}} {
		code, never, errOut := runCLI(t, append(append([]string{}, args...), "--color=never")...)
		if code != 0 {
			t.Fatalf("%q --color=never: exit %d: %s", args, code, errOut)
		}
		_, auto, _ := runCLI(t, args...)
		_, always, _ := runCLI(t, append(append([]string{}, args...), "--color=always")...)
		if strings.Contains(never, "\x1b") || auto != never {
			t.Errorf("%q: escapes without --color=always:\n%q", args, auto)
		}
		if !strings.Contains(always, "\x1b[1m") {
			t.Errorf("%q --color=always: nothing bold:\n%q", args, always)
		}
		if stripANSI(always) != never {
			t.Errorf("%q: --color=always less the escapes:\n%s\n--color=never:\n%s", args, stripANSI(always), never)
		}
	}
	_, out, _ := runCLI(t, "inspect", "--color=always", "dynop.plugin.image")
	if !regexp.MustCompile("\x1b\\[1mstate\x1b\\[0m +\x1b\\[32mavailable\x1b\\[0m\n").MatchString(out) {
		t.Errorf("inspect: the state is not green:\n%q", out)
	}
}

// TestListColourOfUnusablePlugin paints the state of a plugin built for
// another plugin API yellow: unsupported.
func TestListColourOfUnusablePlugin(t *testing.T) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{brokenPlugin{}}, NoRegistered: true, NoDefaultPaths: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	var b bytes.Buffer
	if err := writePlugins(&b, h.Plugins(), false, palette{on: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[33munsupported\x1b[0m") {
		t.Errorf("unsupported is not yellow:\n%q", b.String())
	}
}
