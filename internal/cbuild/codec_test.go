package cbuild

import (
	"strings"
	"testing"
)

// TestCodecSkipsWithoutLibraries: where the codec libraries' headers are
// missing (simulated with a header no machine has), CodecFlags says which
// and what to install, and Codec skips the test instead of failing it,
// as make test needs on a machine without them.
func TestCodecSkipsWithoutLibraries(t *testing.T) {
	cc := Compiler(t, false)
	saved := CodecHeaders
	CodecHeaders = append(append([]string{}, saved...), "dynop_no_such_header.h")
	defer func() { CodecHeaders = saved }()
	_, _, err := CodecFlags(cc)
	if err == nil || !strings.Contains(err.Error(), "headers (turbojpeg.h, png.h, webp/decode.h, webp/encode.h, dynop_no_such_header.h) are missing") ||
		!strings.Contains(err.Error(), "apt-get install libturbojpeg0-dev libpng-dev libwebp-dev") {
		t.Fatalf("CodecFlags without the headers: %v", err)
	}
	var skipped bool
	t.Run("build", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Codec(t)
		t.Error("Codec built the plugin without its headers")
	})
	if !skipped {
		t.Error("Codec did not skip the test without the headers")
	}
}

// TestCodecFlags: with the libraries installed, the flags name them.
func TestCodecFlags(t *testing.T) {
	_, libs, err := CodecFlags(Compiler(t, false))
	if err != nil {
		t.Skip(err)
	}
	joined := strings.Join(libs, " ")
	for _, l := range []string{"-lturbojpeg", "-lpng", "-lwebp"} {
		if !strings.Contains(joined, l) {
			t.Errorf("libs %q lack %s", joined, l)
		}
	}
}
