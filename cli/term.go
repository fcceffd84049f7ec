package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/dynop/dynop"
)

// colorMode is the value of --color: when the tables of list, inspect and
// doctor are coloured.
type colorMode uint8

// The --color values.
const (
	// colorAuto colours output to a terminal, unless $NO_COLOR is set
	// (https://no-color.org) or $TERM is "dumb".
	colorAuto colorMode = iota
	// colorAlways colours, whatever the output and the environment.
	colorAlways
	// colorNever never colours.
	colorNever
)

var colorModeNames = [...]string{"auto", "always", "never"}

// String returns the mode's name, as Set reads it.
func (m *colorMode) String() string {
	if m == nil || int(*m) >= len(colorModeNames) {
		return colorModeNames[colorAuto]
	}
	return colorModeNames[*m]
}

// Set reads auto, always or never (case does not matter).
func (m *colorMode) Set(s string) error {
	for i, name := range colorModeNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			*m = colorMode(i)
			return nil
		}
	}
	return fmt.Errorf("%q: want auto, always or never", s)
}

// addColorFlag gives a command the --color flag and returns its value.
func addColorFlag(fs *flag.FlagSet) *colorMode {
	m := new(colorMode)
	fs.Var(m, "color", "colour the states and headers: `WHEN` is auto (on a terminal, unless $NO_COLOR is set or $TERM is dumb), always or never")
	return m
}

// isTerminal reports whether w is a terminal: an *os.File open on one.
// Any other writer is not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// colorWanted reports whether output to w is coloured under mode m: always
// for colorAlways, never for colorNever, and for colorAuto only if w is a
// terminal, $NO_COLOR is unset or empty and $TERM is not "dumb".
func colorWanted(w io.Writer, m colorMode) bool { return colorOn(m, isTerminal(w)) }

// colorOn reports whether output is coloured under mode m when it goes to
// a terminal (terminal true) or elsewhere; see colorWanted.
func colorOn(m colorMode, terminal bool) bool {
	switch m {
	case colorAlways:
		return true
	case colorNever:
		return false
	}
	return terminal && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// style is an ANSI SGR parameter list ("1" bold, "31" red); "" is plain.
type style string

// The styles the CLI uses.
const (
	stylePlain  style = ""
	styleBold   style = "1"
	styleDim    style = "2"
	styleRed    style = "31"
	styleGreen  style = "32"
	styleYellow style = "33"
	styleCyan   style = "36"
)

// palette paints text in styles when on, and leaves it alone when off.
type palette struct{ on bool }

// newPalette returns the palette for output to w under mode m.
func newPalette(w io.Writer, m colorMode) palette { return palette{on: colorWanted(w, m)} }

// paint returns s in style st: wrapped in the SGR sequence and a reset
// when p is on, s itself otherwise (and for plain or empty text).
func (p palette) paint(s string, st style) string {
	if !p.on || st == stylePlain || s == "" {
		return s
	}
	return "\x1b[" + string(st) + "m" + s + "\x1b[0m"
}

// stateStyle is the colour of a plugin state: green for available, cyan
// for a plugin starting, running or stopping, yellow for unsupported, red
// for broken and untrusted, dim for a duplicate.
func stateStyle(s dynop.State) style {
	switch s {
	case dynop.StateAvailable:
		return styleGreen
	case dynop.StateStarting, dynop.StateStarted, dynop.StateStopping:
		return styleCyan
	case dynop.StateUnsupported:
		return styleYellow
	case dynop.StateBroken, dynop.StateUntrusted:
		return styleRed
	case dynop.StateDuplicate:
		return styleDim
	}
	return stylePlain
}

// cell is one cell of a table: its text and the style it is painted in.
type cell struct {
	text  string
	style style
}

// cells makes plain cells of texts.
func cells(texts ...string) []cell {
	out := make([]cell, len(texts))
	for i, s := range texts {
		out[i] = cell{text: s}
	}
	return out
}

// headerCells makes a table's header row: bold cells.
func headerCells(names ...string) []cell {
	row := cells(names...)
	for i := range row {
		row[i].style = styleBold
	}
	return row
}

// fieldTable is a table of "field  value" rows, the fields bold and rows
// without a value left out.
type fieldTable struct{ table }

// row adds the field k with the value v, if v is not empty.
func (t *fieldTable) row(k, v string) { t.styledRow(k, v, stylePlain) }

// styledRow adds the field k with the value v painted in st, if v is not
// empty.
func (t *fieldTable) styledRow(k, v string, st style) {
	if v != "" {
		t.add(cell{text: k, style: styleBold}, cell{text: v, style: st})
	}
}

// tablePadding is the spaces between columns, as the CLI's tabwriters had.
const tablePadding = 2

// table lays rows of cells out in columns exactly as text/tabwriter does
// with minwidth 0, padding 2 and spaces (cells separated by tabs, each row
// ending in a newline), but measures only the cells' text, so that painted
// cells stay aligned: tabwriter would count the escape sequences as width.
// As in tabwriter, a row's last cell is not part of a column, and a column
// is laid out in blocks of consecutive rows that have a cell in it.
type table struct {
	rows [][]cell
}

// add appends a row. Its cells' text is escaped ([escapeCell]): it may
// be a plugin's.
func (t *table) add(row ...cell) {
	for i := range row {
		row[i].text = escapeCell(row[i].text)
	}
	t.rows = append(t.rows, row)
}

// addText appends a row of plain cells.
func (t *table) addText(texts ...string) { t.add(cells(texts...)...) }

// write prints the table to w, painting the cells with p.
func (t *table) write(w io.Writer, p palette) error {
	widths := columnWidths(t.rows)
	var b strings.Builder
	for i, row := range t.rows {
		for j, c := range row {
			b.WriteString(p.paint(c.text, c.style))
			if j < len(widths[i]) {
				b.WriteString(strings.Repeat(" ", widths[i][j]-utf8.RuneCountInString(c.text)))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// columnWidths returns, for each row, the widths of its columns (padding
// included) that are padded: text/tabwriter's format, which lays out the
// block of rows with a cell in column 0, within it the blocks with a cell
// in column 1, and so on. A row's last cell is in no column.
func columnWidths(rows [][]cell) [][]int {
	out := make([][]int, len(rows))
	var widths []int
	assign := func(line0, line1 int) {
		for l := line0; l < line1; l++ {
			out[l] = append([]int(nil), widths...)
		}
	}
	var format func(line0, line1 int)
	format = func(line0, line1 int) {
		column := len(widths)
		for this := line0; this < line1; this++ {
			if column >= len(rows[this])-1 {
				continue
			}
			assign(line0, this)
			line0 = this
			width := 0
			for ; this < line1 && column < len(rows[this])-1; this++ {
				width = max(width, utf8.RuneCountInString(rows[this][column].text)+tablePadding)
			}
			widths = append(widths, width)
			format(line0, this)
			widths = widths[:len(widths)-1]
			line0 = this
		}
		assign(line0, line1)
	}
	format(0, len(rows))
	return out
}

// Plugin text, printed.
//
// Whatever a plugin supplies — its info (description, author, build, IDs,
// interface, operator and argument names and docs), the errors it sets,
// the lines it logs — may carry bytes a terminal acts on: escape
// sequences that set the window title, clear the screen or paint a fake
// verdict, a carriage return that overwrites a line, right-to-left
// overrides that reorder it. The CLI prints such text only through
// escapeText (escapeCell for a table cell), which spells those bytes out
// instead, in Go's notation; --color affects only the CLI's own colours.
// JSON output is escaped its own way, by newJSONEncoder.

// escapeText returns s with what a terminal would act on spelled out: C0
// control characters other than newline and tab (\r, \x1b…), DEL (\x7f),
// C1 control characters (\u009b), bidirectional formatting characters
// (\u202e…) and bytes that are not UTF-8 (\x9b). Newlines and tabs stay:
// they only break lines, and multi-line errors need them.
func escapeText(s string) string { return escape(s, true) }

// escapeCell is escapeText for one line: a table cell, where a newline or
// a tab would break the layout (or forge a row), so they are spelled out
// too (\n, \t).
func escapeCell(s string) string { return escape(s, false) }

// escape implements escapeText and escapeCell.
func escape(s string, keepLines bool) string {
	if !needsEscape(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case (r == '\n' || r == '\t') && keepLines:
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isC1(r) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether escape changes s.
func needsEscape(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && !(keepLines && (c == '\n' || c == '\t')) || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isC1(r) || isBidi(r) {
			return true
		}
		i += size
	}
	return false
}

// isC1 reports whether r is a C1 control character (U+0080–U+009F);
// U+009B is CSI to some terminals.
func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports whether r is a bidirectional formatting character: the
// embeddings and overrides (U+202A–U+202E), the isolates (U+2066–U+2069)
// and the marks (U+200E, U+200F, U+061C), which reorder what a terminal
// shows.
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// newJSONEncoder returns the encoder of the CLI's --json output: indented
// by two spaces, and, beyond what encoding/json escapes (control
// characters below U+0020, U+2028, U+2029, <, >, &; invalid UTF-8 becomes
// U+FFFD), with DEL, C1 controls and bidirectional formatting characters
// written as \u escapes, so that plugin text in JSON printed to a
// terminal cannot act on it either. The JSON means the same.
func newJSONEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(jsonEscaper{w})
	enc.SetIndent("", "  ")
	return enc
}

// jsonEscaper writes JSON with the characters escape spells out as \u
// escapes. Outside strings JSON is ASCII without DEL, so only strings
// change. An [json.Encoder] writes each value in one Write, so no
// character is split between two.
type jsonEscaper struct{ w io.Writer }

func (j jsonEscaper) Write(p []byte) (int, error) {
	if !needsEscape(string(p), true) {
		return j.w.Write(p)
	}
	var b bytes.Buffer
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == 0x7f || isC1(r) || isBidi(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(p[i : i+size])
		}
		i += size
	}
	if _, err := j.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
