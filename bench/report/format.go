package report

import (
	"fmt"
	"math"
	"strings"
)

// Duration formats a time in nanoseconds with three significant digits
// and the unit that suits it: "2.41 ns", "312 µs", "1.05 s".
func Duration(ns float64) string {
	switch a := math.Abs(ns); {
	case a >= 1e9:
		return sig3(ns/1e9) + " s"
	case a >= 1e6:
		return sig3(ns/1e6) + " ms"
	case a >= 1e3:
		return sig3(ns/1e3) + " µs"
	}
	return sig3(ns) + " ns"
}

// Ratio formats x as "1.23×" (three significant digits).
func Ratio(x float64) string { return sig3(x) + "×" }

// Quantity formats x with an SI prefix and unit: "4.12 M nodes/s",
// "512 images/s", "18.3 GB/s" (for unit "B/s").
func Quantity(x float64, unit string) string {
	for _, p := range []struct {
		f float64
		s string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(x) >= p.f {
			if strings.HasPrefix(unit, "B/") {
				return sig3(x/p.f) + " " + p.s + unit
			}
			return sig3(x/p.f) + " " + p.s + " " + unit
		}
	}
	return sig3(x) + " " + unit
}

// sig3 formats x with three significant digits, without an exponent.
func sig3(x float64) string {
	switch a := math.Abs(x); {
	case a == 0 || math.IsInf(x, 0) || math.IsNaN(x):
		return fmt.Sprint(x)
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	digits := 2 - int(math.Floor(math.Log10(math.Abs(x))))
	return fmt.Sprintf("%.*f", digits, x)
}

// A Table is a Markdown table: a header and rows of cells. Cells may
// hold Markdown; a "|" in a cell is escaped.
type Table struct {
	Header []string
	Rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Markdown returns the table in GitHub-flavoured Markdown, first column
// left-aligned, the others right-aligned.
func (t *Table) Markdown() string {
	var sb strings.Builder
	row := func(cells []string) {
		sb.WriteString("|")
		for i := range t.Header {
			c := ""
			if i < len(cells) {
				c = strings.ReplaceAll(cells[i], "|", `\|`)
			}
			sb.WriteString(" " + c + " |")
		}
		sb.WriteString("\n")
	}
	row(t.Header)
	sb.WriteString("|")
	for i := range t.Header {
		if i == 0 {
			sb.WriteString("---|")
		} else {
			sb.WriteString("---:|")
		}
	}
	sb.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return sb.String()
}
