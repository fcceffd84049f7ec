package testimage

import (
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteJPEGs(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJPEGs(dir, 3, 64, 48); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"photo00.jpg", "photo01.jpg", "photo02.jpg"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := jpeg.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 64 || cfg.Height != 48 {
			t.Errorf("%s: %v, %dx%d; want a 64x48 JPEG", name, err, cfg.Width, cfg.Height)
		}
	}
	if err := WriteJPEGs(filepath.Join(dir, "missing"), 1, 8, 8); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
