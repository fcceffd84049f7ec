package cli

import (
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestRunPhotoPipeline: the README's photo pipeline turns each bundled
// photo upright by its EXIF orientation (the portrait mandelbrot.jpg
// comes out 216x288, the others 288x216), and its thumbnails are those
// the README shows, within what two JPEG round trips and the two decoders
// (the codec plugin's libjpeg-turbo where it is built, Go's image/jpeg
// where not) change: a mean difference under 3 levels.
func TestRunPhotoPipeline(t *testing.T) {
	paths := []string{filepath.Dir(cbuild.Imgproc(t))}
	if cc, err := cbuild.CompilerCommand(false); err == nil {
		if _, _, err := cbuild.CodecFlags(cc); err == nil {
			paths = append(paths, filepath.Dir(cbuild.Codec(t)))
		}
	}
	t.Setenv("DYNOP_PLUGIN_PATH", strings.Join(paths, string(os.PathListSeparator)))
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "../examples/pipelines/photos.yaml", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "photos: 3 images in 1 batch in ") || !strings.Contains(stdout, "imgproc.UnsharpMask") {
		t.Errorf("output:\n%s", stdout)
	}
	read := func(path string) image.Image {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := jpeg.Decode(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	for name, size := range map[string][2]int{"hills": {288, 216}, "mandelbrot": {216, 288}, "shapes": {288, 216}} {
		got := read(filepath.Join(out, name+".jpg"))
		if b := got.Bounds(); b.Dx() != size[0] || b.Dy() != size[1] {
			t.Errorf("%s.jpg is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), size[0], size[1])
			continue
		}
		shown := read(filepath.Join("..", "docs", "photo-"+name+".jpg"))
		if shown.Bounds() != got.Bounds() {
			t.Errorf("docs/photo-%s.jpg is %v, the pipeline makes %v: copy it from examples/pipelines/out/photos after make demo", name, shown.Bounds(), got.Bounds())
			continue
		}
		var sum, n float64
		b := got.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r1, g1, b1, _ := got.At(x, y).RGBA()
				r2, g2, b2, _ := shown.At(x, y).RGBA()
				for _, d := range []int{int(r1>>8) - int(r2>>8), int(g1>>8) - int(g2>>8), int(b1>>8) - int(b2>>8)} {
					sum += float64(max(d, -d))
					n++
				}
			}
		}
		if mean := sum / n; mean >= 3 {
			t.Errorf("%s.jpg differs from docs/photo-%s.jpg by %.2f levels on average: copy it from examples/pipelines/out/photos after make demo", name, name, mean)
		} else {
			t.Logf("%s.jpg: %.3f levels from docs/photo-%s.jpg on average", name, mean, name)
		}
	}
}

// TestChannelCountsChecked: a one-channel decode into imgproc.ColorTwist,
// which takes 3 or 4 channels, fails at dynop graph time at the
// reference's position, naming the counts; with 4 channels it builds.
func TestChannelCountsChecked(t *testing.T) {
	withImgproc(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in", "a.jpg"), nil, 0o644); err != nil { // graph reads no file
		t.Fatal(err)
	}
	write := func(channels int) {
		t.Helper()
		yaml := fmt.Sprintf(`name: c
inputs:
  photos: {files: [in/]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos], args: {channels: %d}}
  - {name: twist, op: imgproc.ColorTwist, inputs: [decode], args: {saturation: 1.5}}
outputs:
  out: {from: twist, dir: out}
`, channels)
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	code, _, stderr := runCLI(t, "graph", file)
	if want := `p.yaml:6:52: operators[1].inputs[0]: imgproc.ColorTwist input "images" is given uint8 HWC with 1 channel: it takes 3 or 4 channels (the output "images" of "decode")`; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("graph: exit %d, want %q in\n%s", code, want, stderr)
	}
	write(4)
	if code, stdout, stderr := runCLI(t, "graph", file); code != 0 || !strings.Contains(stdout, "twist: imgproc.ColorTwist") {
		t.Errorf("graph with 4 channels: exit %d\n%s%s", code, stdout, stderr)
	}
}
