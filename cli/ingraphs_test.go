package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestInspectSaysWhatGraphsRun: dynop inspect says, for an operator that
// a plugin's populate pass replaces, which operator pipelines run in its
// place and through which pass; for the replacing operator, what it
// replaces; and with the replacing plugin absent, that the operator runs
// as named (issue 24: "dynop inspect says which runs and why").
func TestInspectSaysWhatGraphsRun(t *testing.T) {
	// No plugin files: the Go image.Grayscale runs as named.
	code, out, errOut := runCLI(t, "inspect", "image.Grayscale")
	if code != 0 || !strings.Contains(out, "in graphs  runs as named: no pass of the plugins found replaces it") {
		t.Errorf("inspect image.Grayscale without imgproc: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("DYNOP_PLUGIN_PATH", filepath.Dir(cbuild.Imgproc(t)))
	code, out, errOut = runCLI(t, "inspect", "image.Grayscale")
	if want := "in graphs  imgproc.Grayscale runs in its place: pass imgproc.native-grayscale of dynop.plugin.imgproc replaces the Go image.Grayscale with the native one; skipping the pass keeps image.Grayscale (dynop run --skip-pass imgproc.native-grayscale)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("inspect image.Grayscale with imgproc: exit %d, want %q in\n%s%s", code, want, out, errOut)
	}
	code, out, errOut = runCLI(t, "inspect", "imgproc.Grayscale")
	if code != 0 || !strings.Contains(out, "in graphs   runs as named") || !strings.Contains(out, "replaces    image.Grayscale in graphs (pass imgproc.native-grayscale)") {
		t.Errorf("inspect imgproc.Grayscale: exit %d\n%s%s", code, out, errOut)
	}
	// Operators no pass matches are not built (image.Resize has required
	// arguments a trial graph could not give).
	code, out, errOut = runCLI(t, "inspect", "image.Resize")
	if code != 0 || !strings.Contains(out, "in graphs  runs as named: no pass of the plugins found replaces it") {
		t.Errorf("inspect image.Resize: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "inspect", "--json", "image.Grayscale")
	var doc struct {
		Graphs struct {
			Runs, Pass, Plugin, Why string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("inspect --json: exit %d, %v\n%s", code, err, out)
	}
	if g := doc.Graphs; g.Runs != "imgproc.Grayscale" || g.Pass != "imgproc.native-grayscale" || g.Plugin != "dynop.plugin.imgproc" || !strings.Contains(g.Why, "replaces the Go image.Grayscale") {
		t.Errorf("inspect --json image.Grayscale: graphs %+v", g)
	}
	code, out, _ = runCLI(t, "inspect", "--json", "imgproc.Grayscale")
	var rdoc struct {
		Graphs struct {
			Runs     string
			Replaces []struct{ Operator, Pass, Plugin string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rdoc); err != nil || code != 0 {
		t.Fatalf("inspect --json: exit %d, %v\n%s", code, err, out)
	}
	if g := rdoc.Graphs; g.Runs != "imgproc.Grayscale" || len(g.Replaces) != 1 || g.Replaces[0].Operator != "image.Grayscale" || g.Replaces[0].Pass != "imgproc.native-grayscale" || g.Replaces[0].Plugin != "dynop.plugin.imgproc" {
		t.Errorf("inspect --json imgproc.Grayscale: graphs %+v", g)
	}
}

// TestInspectNamesTheNativeCodecs: with the codec plugin, image.Decode and
// image.Encode say that codec.Decode and codec.Encode run in their place.
func TestInspectNamesTheNativeCodecs(t *testing.T) {
	t.Setenv("DYNOP_PLUGIN_PATH", filepath.Dir(cbuild.Codec(t)))
	for _, c := range []struct{ goOp, native, pass string }{
		{"image.Decode", "codec.Decode", "codec.native-codecs.decode"},
		{"image.Encode", "codec.Encode", "codec.native-codecs.encode"},
	} {
		code, out, errOut := runCLI(t, "inspect", c.goOp)
		if want := "in graphs  " + c.native + " runs in its place: pass " + c.pass + " of dynop.plugin.codec"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "libjpeg-turbo, libpng, libwebp") {
			t.Errorf("inspect %s: exit %d, want %q in\n%s%s", c.goOp, code, want, out, errOut)
		}
		code, out, errOut = runCLI(t, "inspect", c.native)
		if want := "replaces   " + c.goOp + " in graphs (pass " + c.pass + ")"; code != 0 || !strings.Contains(out, want) {
			t.Errorf("inspect %s: exit %d, want %q in\n%s%s", c.native, code, want, out, errOut)
		}
	}
}
