package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Duration(2.414), "2.41 ns"},
		{Duration(999), "999 ns"},
		{Duration(312_000), "312 µs"},
		{Duration(1_050_000_000), "1.05 s"},
		{Duration(12_340_000), "12.3 ms"},
		{Ratio(1.234), "1.23×"},
		{Ratio(0.0123), "0.0123×"},
		{Ratio(1530), "1530×"},
		{Quantity(4.12e6, "nodes/s"), "4.12 M nodes/s"},
		{Quantity(512, "images/s"), "512 images/s"},
		{Quantity(18.3e9, "B/s"), "18.3 GB/s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestTableMarkdown(t *testing.T) {
	tb := &Table{Header: []string{"what", "time"}}
	tb.Add("a | b", "1 ns")
	tb.Add("short row")
	want := "| what | time |\n|---|---:|\n| a \\| b | 1 ns |\n| short row |  |\n"
	if got := tb.Markdown(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPlotSVG(t *testing.T) {
	p := &Plot{Title: "calls <vs> size", XLabel: "bytes", YLabel: "ratio",
		Series: []Series{{Name: "native", X: []float64{256, 4096, 1 << 20}, Y: []float64{3, 1.2, 1.01}},
			{Name: "wasm", X: []float64{256, 1 << 20}, Y: []float64{30, 3.4}}},
		Guides: []Guide{{Y: 1, Label: "direct"}}}
	var buf bytes.Buffer
	if err := p.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, one polyline per series, the names and the
	// escaped title in it.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	lines := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v\n%s", err, buf.String())
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 2 {
		t.Errorf("%d polylines, want 2", lines)
	}
	for _, s := range []string{"native", "wasm", "calls &lt;vs&gt; size", "direct"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
}

func TestPlotRejects(t *testing.T) {
	for _, c := range []struct {
		p    Plot
		want string
	}{
		{Plot{Title: "t"}, `plot "t": no series`},
		{Plot{Title: "t", Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}, `series "s" has 2 x and 1 y values`},
		{Plot{Title: "t", Series: []Series{{Name: "s", X: []float64{1, 0}, Y: []float64{1, 1}}}}, `series "s": point (0, 1) cannot go on logarithmic axes`},
		{Plot{Title: "t", Series: []Series{{Name: "s"}}}, `series "s" has 0 x and 0 y values`},
	} {
		err := c.p.WriteSVG(io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteSVG = %v, want an error with %q", err, c.want)
		}
	}
}
