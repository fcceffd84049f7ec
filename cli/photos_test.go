package cli

import (
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
	if !strings.Contains(stdout, "photos: 3 images in 1 batches") || !strings.Contains(stdout, "imgproc.UnsharpMask") {
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
