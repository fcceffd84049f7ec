package cli

import (
	"bytes"
	"encoding/json"
	"github.com/dynop/dynop/pipeline"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

const demo = "../examples/pipelines/demo.yaml"

// withImgproc builds the imgproc plugin, the backbone of the demo
// pipeline, and puts it on the CLI's search path for the test (make demo
// finds it in bin/plugins).
func withImgproc(t *testing.T) {
	t.Setenv("DYNOP_PLUGIN_PATH", filepath.Dir(cbuild.Imgproc(t)))
}

func TestRunDemoPipeline(t *testing.T) {
	withImgproc(t)
	out := t.TempDir()
	trace := filepath.Join(t.TempDir(), "trace.json")
	code, stdout, stderr := runCLI(t, "run", demo, "--out", out, "--workers", "2", "--trace", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"demo: 6 images in 2 batches", "NODE", "contrast+gamma+invert", "image.Adjust+image.Gamma+image.Invert", "wrote 6 files to " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// Not a terminal: a plain line per batch, with the batches and the
	// images done so far.
	if stderr != "1/2 batches, 4 images\n2/2 batches, 6 images\n" {
		t.Errorf("progress %q", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.png"))
	if len(files) != 6 {
		t.Errorf("%d output files: %v", len(files), files)
	}
	// The README shows two of the results: they are what the demo makes,
	// pixel for pixel (the PNG bytes depend on the encoder: Go's here,
	// libpng's where make demo finds the codec plugin).
	pixels := func(path string) []byte {
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			return nil
		}
		var b bytes.Buffer
		r := img.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				b.Write([]byte{c.R, c.G, c.B, c.A})
			}
		}
		return b.Bytes()
	}
	for _, name := range []string{"mandelbrot", "hills"} {
		got, shown := pixels(filepath.Join(out, name+".png")), pixels("../docs/demo-"+name+".png")
		if got == nil || !bytes.Equal(got, shown) {
			t.Errorf("docs/demo-%s.png is not the demo's %s.png: copy it from examples/pipelines/out after make demo", name, name)
		}
	}
	var tr struct{ TraceEvents []map[string]any }
	data, err := os.ReadFile(trace)
	if err != nil || json.Unmarshal(data, &tr) != nil || len(tr.TraceEvents) < 12 {
		t.Errorf("trace: %v, %d events", err, len(tr.TraceEvents))
	}
	// The trace is readable by all, as the outputs are (it was 0600).
	if fi, err := os.Stat(trace); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("trace: mode %v, %v; want 0644", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(filepath.Join(out, "rings.png")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("an output: mode %v, %v; want 0644, as the trace's", fi.Mode().Perm(), err)
	}

	code, stdout, stderr = runCLI(t, "run", "--json", "--no-fuse", "--in", "../examples/pipelines/images/rings.png", "--out", out, demo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type summary struct {
		Schema string
		Images int
		Fused  bool
		Nodes  []struct {
			Node       string
			Definition []string
		}
	}
	var sum summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	defs := map[string][]string{}
	for _, n := range sum.Nodes {
		defs[n.Node] = n.Definition
	}
	if sum.Schema != "dynop.run/v2" || sum.Images != 1 || sum.Fused || !slices.Equal(defs["gamma"], []string{"image.Gamma"}) {
		t.Errorf("summary %+v", sum)
	}

	// A fused node's definition is an array of its operators' names, in
	// order (v1 had the string "[image.Adjust image.Gamma image.Invert]").
	code, stdout, stderr = runCLI(t, "run", "--json", "--in", "../examples/pipelines/images/rings.png", "--out", out, demo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "1/1 batch, 1 image\n" {
		t.Errorf("progress of one batch of one image %q", stderr)
	}
	sum = summary{}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	defs = map[string][]string{}
	for _, n := range sum.Nodes {
		defs[n.Node] = n.Definition
	}
	if want := []string{"image.Adjust", "image.Gamma", "image.Invert"}; !sum.Fused || !slices.Equal(defs["contrast+gamma+invert"], want) {
		t.Errorf("fused run: definitions %q, want contrast+gamma+invert: %q", defs, want)
	}
}

func TestGraphCommand(t *testing.T) {
	withImgproc(t)
	code, stdout, stderr := runCLI(t, "graph", demo, "--dot")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`digraph "demo" {`, `subgraph "cluster_`, `label="contrast+gamma+invert (fused)"`, `label="photos"`, `label="thumbs"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("DOT lacks %s:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCLI(t, "graph", "--no-fuse", demo)
	if code != 0 || !strings.Contains(stdout, "gamma: image.Gamma (dynop.plugin.image) <- contrast.adjusted") || strings.Contains(stdout, "subgraph") {
		t.Errorf("graph --no-fuse: exit %d\n%s", code, stdout)
	}
	// --skip-pass keeps the operator a pass would replace; an unknown
	// pass name is an error listing the host's passes.
	code, stdout, _ = runCLI(t, "graph", demo)
	if code != 0 || !strings.Contains(stdout, "gray: imgproc.Grayscale (dynop.plugin.imgproc)") {
		t.Errorf("graph: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "graph", "--skip-pass", "imgproc.native-grayscale", demo)
	if code != 0 || !strings.Contains(stdout, "gray: image.Grayscale (dynop.plugin.image)") {
		t.Errorf("graph --skip-pass imgproc.native-grayscale: exit %d\n%s", code, stdout)
	}
	code, _, stderr = runCLI(t, "graph", "--skip-pass", "imgproc.native-grayscal", demo)
	if code != 1 || !strings.Contains(stderr, `skipping pass "imgproc.native-grayscal": the host has no pass of that name (it has `) || !strings.Contains(stderr, "imgproc.native-grayscale") {
		t.Errorf("graph --skip-pass with a misspelt pass: exit %d\n%s", code, stderr)
	}
}

func TestRunErrors(t *testing.T) {
	withImgproc(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("inputs: {a: {files: x.png}}\noperators:\n  - {name: d, op: image.Decod, inputs: [a]}\noutputs: {o: {from: d}}\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run"}, 2, "run takes one pipeline file, got 0 arguments"},
		{[]string{"run", demo, demo}, 2, "got 2 arguments"},
		{[]string{"run", demo, "--workers", "-1"}, 2, "--workers -1: must be 0 (GOMAXPROCS) or more"},
		{[]string{"run", demo, "--prefetch", "-2"}, 2, "--prefetch -2: must be 0 (2) or more"},
		{[]string{"run", demo, "--shard", "3/2"}, 2, "run: --shard: shard 3/2: want I/N with 0 ≤ I < N (N at least 1)"},
		{[]string{"run", demo, "--resume", "--atomic"}, 2, "--resume and --atomic: an atomic run keeps no journal to resume from"},
		// Not an input's name, and no such file: the inputs are listed,
		// the nearest suggested.
		{[]string{"run", demo, "--in", "pics=photos_small"}, 2, `run: --in "pics=photos_small": "pics" is not an input of the pipeline, and no file "pics=photos_small" exists; the pipeline's inputs: photos`},
		{[]string{"run", demo, "--in", "photo=x.png"}, 2, `"photo" is not an input of the pipeline (did you mean "photos"?)`},
		{[]string{"run", demo, "--in", "no/pe=x.png"}, 1, `no/pe=x.png": stat`}, // a path, as it has a separator
		{[]string{"run", demo, "--in", "photos="}, 2, `--in "photos=": empty path`},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, 1, "missing.yaml: no such file"},
		{[]string{"run", bad}, 1, `bad.yaml:3:`},
		{[]string{"run", bad}, 1, `did you mean "image.Decode"`},
		{[]string{"graph"}, 2, "graph takes one pipeline file"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("dynop %s: exit %d, %q; want exit %d with %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
}

func TestShardOf(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		flag  string
		count int
		env   func(string) string
		want  pipeline.Shard
	}{
		{"", 0, env(), pipeline.Shard{}},
		{"2/5", 0, env("JOB_COMPLETION_INDEX", "4"), pipeline.Shard{Index: 2, Count: 5}},
		{"", 5, env("JOB_COMPLETION_INDEX", "4"), pipeline.Shard{Index: 4, Count: 5}},
		{"", 4, env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4"), pipeline.Shard{Index: 3, Count: 4}},
		{"", 4, env("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_MIN", "5"), pipeline.Shard{Index: 3, Count: 4}},
	} {
		if got, err := shardOf(c.flag, c.count, c.env); err != nil || got != c.want {
			t.Errorf("shardOf(%q, %d) = %v, %v; want %v", c.flag, c.count, got, err, c.want)
		}
	}
	for _, c := range []struct {
		flag  string
		count int
		env   func(string) string
		say   string
	}{
		{"3/2", 0, env(), "--shard: shard 3/2: want I/N with 0 ≤ I < N (N at least 1)"},
		{"0/0", 0, env(), "--shard: shard 0/0: want I/N with 0 ≤ I < N"},
		{"-1/4", 0, env(), "--shard: shard -1/4: want I/N with 0 ≤ I < N"},
		{"a/b", 0, env(), `--shard: shard "a/b": want I/N, two whole numbers`},
		{"1/2", 2, env(), "--shard and --shards: give one"},
		{"", -3, env(), "--shards -3: want the number of shards, at least 1"},
		{"", 4, env(), "--shards 4: no shard index in the environment: set JOB_COMPLETION_INDEX"},
		{"", 4, env("JOB_COMPLETION_INDEX", "4"), "--shards 4 with JOB_COMPLETION_INDEX=4: shard 4/4: want I/N with 0 ≤ I < N"},
		{"", 4, env("JOB_COMPLETION_INDEX", "x"), `--shards 4: JOB_COMPLETION_INDEX="x" is not a whole number`},
		{"", 4, env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "8"), "the Slurm array has SLURM_ARRAY_TASK_COUNT=8 tasks: give --shards 8"},
	} {
		if _, err := shardOf(c.flag, c.count, c.env); err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("shardOf(%q, %d) = %v, want an error saying %q", c.flag, c.count, err, c.say)
		}
	}
}

// TestRunAllSkippedNamesEach: when on_error: skip left out every input,
// the run fails and names each input skipped and why.
func TestRunAllSkippedNamesEach(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.png", "b.jpg"} {
		if err := os.WriteFile(filepath.Join(in, name), []byte("not an image"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "p.yaml")
	yaml := "on_error: skip\ninputs: {photos: {files: [in/]}}\noperators:\n  - {name: d, op: image.Decode, inputs: [photos]}\noutputs: {o: {from: d, dir: out}}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", file)
	if code != 1 || !strings.Contains(stderr, "all 2 inputs were skipped") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, name := range []string{"a.png", "b.jpg"} {
		if !strings.Contains(stderr, "skipped "+filepath.Join(in, name)+": ") {
			t.Errorf("stderr does not name the skipped %s:\n%s", name, stderr)
		}
	}
}
