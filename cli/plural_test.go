package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/pipeline"
)

// TestCountsSayOneThing: a count of one takes the singular, in the run's
// summary, its progress line and the error about broken plugin files.
func TestCountsSayOneThing(t *testing.T) {
	var b bytes.Buffer
	one := &pipeline.Summary{Pipeline: "p", Images: 1, Batches: 1, Workers: 1, Resumed: 1, Outputs: []string{"/o/a.png"},
		Nodes: []pipeline.NodeStat{{Node: "a+b", Definition: pipeline.Definition{"image.Adjust", "image.Invert"}, Calls: 1}}}
	if err := writeSummary(&b, one); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p: 1 image in 1 batch in ", " on 1 worker;", "; 1 input already done (resumed)", "wrote 1 file to /o\n", "a+b   image.Adjust+image.Invert"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	two := &pipeline.Summary{Pipeline: "p", Images: 6, Batches: 2, Workers: 2, Resumed: 2, Outputs: []string{"/o/a.png", "/o/b.png"}}
	if err := writeSummary(&b, two); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p: 6 images in 2 batches in ", " on 2 workers;", "; 2 inputs already done (resumed)", "wrote 2 files to /o\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}

	for _, c := range []struct {
		p    pipeline.Progress
		want string
	}{
		{pipeline.Progress{Batch: 1, Batches: 1, Images: 1}, "1/1 batch, 1 image"},
		{pipeline.Progress{Batch: 1, Batches: 2, Images: 4}, "1/2 batches, 4 images"},
		{pipeline.Progress{Batch: 2, Batches: 2, Images: 6, Skipped: 1}, "2/2 batches, 6 images, 1 skipped"},
	} {
		if got := progressLine(c.p); got != c.want {
			t.Errorf("progressLine(%+v) = %q, want %q", c.p, got, c.want)
		}
		b.Reset()
		progress(&b)(c.p) // not a terminal: the line alone
		if b.String() != c.want+"\n" {
			t.Errorf("progress(%+v) wrote %q, want %q", c.p, b.String(), c.want+"\n")
		}
	}

	broken := func(n int) []dynop.PluginStatus {
		var sts []dynop.PluginStatus
		for range n {
			sts = append(sts, dynop.PluginStatus{State: dynop.StateBroken, Err: errors.New("bad file")})
		}
		return sts
	}
	if err := brokenError(broken(1), nil); err == nil || !errors.Is(err, errBroken) || !strings.HasPrefix(err.Error(), "1 plugin file could not be used:\nbad file") {
		t.Errorf("one broken file: %v", err)
	}
	if err := brokenError(broken(2), nil); err == nil || !strings.HasPrefix(err.Error(), "2 plugin files could not be used:\n") {
		t.Errorf("two broken files: %v", err)
	}
}
