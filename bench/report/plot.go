package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// A Plot is a line chart with logarithmic axes, written as SVG.
type Plot struct {
	Title, XLabel, YLabel string
	// XTick and YTick format a tick's value; nil prints it as a number.
	XTick, YTick func(float64) string
	Series       []Series
	// Guides are horizontal reference lines, such as y = 1.
	Guides []Guide
}

// A Series is one line: points (X[i], Y[i]) with positive coordinates.
type Series struct {
	Name string
	X, Y []float64
}

// A Guide is a dashed horizontal line at Y, labelled.
type Guide struct {
	Y     float64
	Label string
}

// palette has colours that stay apart for the colour-blind (Okabe–Ito).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// WriteSVG writes the plot as a standalone SVG image. It fails if a
// series has no points, a point is not positive, or X and Y differ in
// length.
func (p *Plot) WriteSVG(w io.Writer) error {
	const width, height, left, right, top, bottom = 720, 420, 70, 190, 40, 50
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		if len(s.X) == 0 || len(s.X) != len(s.Y) {
			return errorf("plot %q: series %q has %d x and %d y values", p.Title, s.Name, len(s.X), len(s.Y))
		}
		for i := range s.X {
			if !(s.X[i] > 0 && s.Y[i] > 0) || math.IsInf(s.X[i], 0) || math.IsInf(s.Y[i], 0) {
				return errorf("plot %q: series %q: point (%v, %v) cannot go on logarithmic axes", p.Title, s.Name, s.X[i], s.Y[i])
			}
			xmin, xmax = min(xmin, s.X[i]), max(xmax, s.X[i])
			ymin, ymax = min(ymin, s.Y[i]), max(ymax, s.Y[i])
		}
	}
	if len(p.Series) == 0 {
		return errorf("plot %q: no series", p.Title)
	}
	for _, g := range p.Guides {
		ymin, ymax = min(ymin, g.Y), max(ymax, g.Y)
	}
	// Whole decades around the data.
	lx0, lx1 := math.Floor(math.Log10(xmin)), math.Ceil(math.Log10(xmax))
	ly0, ly1 := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	px := func(x float64) float64 { return left + (math.Log10(x)-lx0)/(lx1-lx0)*pw }
	py := func(y float64) float64 { return top + ph - (math.Log10(y)-ly0)/(ly1-ly0)*ph }
	tick := func(f func(float64) string, v float64) string {
		if f != nil {
			return f(v)
		}
		return sig3(v)
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&sb, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&sb, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(p.Title))
	// Grid and ticks, one per decade.
	for e := lx0; e <= lx1; e++ {
		x := px(math.Pow(10, e))
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, top, x, top+ph)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, top+ph+16, html.EscapeString(tick(p.XTick, math.Pow(10, e))))
	}
	for e := ly0; e <= ly1; e++ {
		y := py(math.Pow(10, e))
		fmt.Fprintf(&sb, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, left+pw, y)
		fmt.Fprintf(&sb, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, html.EscapeString(tick(p.YTick, math.Pow(10, e))))
	}
	fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+pw/2, height-10, html.EscapeString(p.XLabel))
	fmt.Fprintf(&sb, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+ph/2, html.EscapeString(p.YLabel))
	for _, g := range p.Guides {
		y := py(g.Y)
		fmt.Fprintf(&sb, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="5 4"/>`+"\n", left, y, left+pw, y)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" fill="#666" text-anchor="end">%s</text>`+"\n", left+pw-4, y-4, html.EscapeString(g.Label))
	}
	for i, s := range p.Series {
		colour := palette[i%len(palette)]
		var pts []string
		for j := range s.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.X[j]), py(s.Y[j])))
		}
		fmt.Fprintf(&sb, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), colour)
		for j := range s.X {
			fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(s.X[j]), py(s.Y[j]), colour)
		}
		ly := float64(top + 10 + 20*i)
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", left+pw+12, ly, left+pw+32, ly, colour)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f">%s</text>`+"\n", left+pw+38, ly+4, html.EscapeString(s.Name))
	}
	sb.WriteString("</svg>\n")
	_, err := io.WriteString(w, sb.String())
	return err
}
