package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/demo"
)

// TestMain serves as the scanner child process when a host of the tests
// starts this binary as one, as main does.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	os.Exit(m.Run())
}

// TestDemo runs the operator demo over a freshly built imgproc plugin and
// checks the order of what it claims and the files it writes.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	if err := run(context.Background(), &out, dir, cbuild.Imgproc(t), nil); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	demo.CheckOrder(t, out.String(),
		"imgproc.Grayscale  from dynop.plugin.imgproc",
		"dynop.plugin.imgproc available refs=0 starts=0 stops=0",
		`msg="plugin started" plugin=dynop.plugin.image`,
		`msg="plugin started" plugin=dynop.plugin.imgproc`,
		"dynop.plugin.image   started   refs=5 starts=1 stops=0",
		"imgproc.Grayscale  → uint8 [[240 320 1] [200 200 1] [61 97 1]]",
		"image.Resize       → uint8 [[48 64 1] [48 64 1] [48 64 1]]",
		`msg="plugin stopped" plugin=dynop.plugin.imgproc`,
		"dynop.plugin.imgproc available refs=0 starts=1 stops=1",
		"closed cleanly",
	)
	for i := range 3 {
		f, err := os.Open(filepath.Join(dir, "gray-pattern"+string(rune('0'+i))+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 48 {
			t.Errorf("output %d is %v, want 64×48", i, b)
		}
	}
}
