// Command operators is the operator demo: image files go through a chain
// of operators looked up by name — image.Read and image.Decode (a Go
// plugin), imgproc.Grayscale (a C plugin, dlopen'ed only now), then
// image.Resize, image.Encode and image.Write (Go again) — and each plugin
// starts when its first operator is instantiated and unloads when its last
// instance closes.
//
// Usage: operators [-out DIR] LIBIMGPROC [IMAGE...]
//
// Without images it writes a few test patterns of different sizes as PNG
// files first (a batch whose samples differ in shape). make demo runs it
// over the example plugin.
package main

import (
	"context"
	"flag"
	"fmt"
	goimage "image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/demo"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	_ "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func main() {
	dynop.ServeScanner() // as a scanner child process, inspect a plugin file and exit
	outDir := flag.String("out", "", "directory for the results (default: a new temporary directory)")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: operators [-out DIR] LIBIMGPROC [IMAGE...] (make demo passes the example plugin)")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, *outDir, flag.Arg(0), flag.Args()[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "operators:", err)
		os.Exit(1)
	}
}

// step is one operator of the chain.
type step struct {
	name string
	args schema.Args
}

func run(ctx context.Context, out io.Writer, outDir, lib string, images []string) error {
	if outDir == "" {
		dir, err := os.MkdirTemp("", "dynop-operators-")
		if err != nil {
			return err
		}
		outDir = dir
	}
	if len(images) == 0 {
		var err error
		if images, err = writePatterns(outDir); err != nil {
			return err
		}
	}
	names := make([]string, len(images))
	for i, p := range images {
		names[i] = "gray-" + filepath.Base(p[:len(p)-len(filepath.Ext(p))]) + ".png"
	}

	fmt.Fprintln(out, "== open: operators are known by their plugins' info; nothing starts")
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{lib}, NoDefaultPaths: true, Logger: demo.Logger(out)})
	if err != nil {
		return err
	}
	for _, st := range h.Plugins() {
		if st.State == dynop.StateBroken {
			return fmt.Errorf("plugin file %s: %w", st.Path, st.Err)
		}
	}
	chain := []step{
		{"image.Read", schema.Args{"paths": images}},
		{"image.Decode", schema.Args{"channels": 3}},
		{imgproc.Grayscale, nil},
		{"image.Resize", schema.Args{"width": 64, "height": 48}},
		{"image.Encode", schema.Args{"format": "png"}},
		{"image.Write", schema.Args{"dir": outDir, "names": names}},
	}
	for _, s := range chain {
		e, err := h.Operators().Lookup(s.name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-18s from %s\n", s.name, e.Plugin)
	}
	showStates(out, h)

	fmt.Fprintln(out, "\n== instantiate the chain: each plugin starts for its first operator")
	var insts []*op.Instance
	defer func() {
		for _, in := range insts {
			in.Close()
		}
	}()
	for _, s := range chain {
		in, err := h.NewOperator(ctx, s.name, s.args)
		if err != nil {
			return err
		}
		insts = append(insts, in)
	}
	showStates(out, h)

	fmt.Fprintf(out, "\n== run a batch of %d images\n", len(images))
	var batch []*tensor.Batch
	for i, in := range insts {
		outs, err := in.Exec(ctx, batch...)
		if err != nil {
			return err
		}
		if len(outs) > 0 {
			fmt.Fprintf(out, "%-18s → %s %v\n", chain[i].name, outs[0].DType(), outs[0].Shapes())
		}
		batch = outs
	}
	for _, n := range names {
		fmt.Fprintf(out, "wrote %s\n", filepath.Join(outDir, n))
	}

	fmt.Fprintln(out, "\n== close the instances: each plugin stops with its last one; the C library is unloaded")
	for _, in := range insts {
		if err := in.Close(); err != nil {
			return err
		}
	}
	insts = nil
	showStates(out, h)
	if err := h.Close(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "closed cleanly")
	return nil
}

func showStates(out io.Writer, h *dynop.Host) {
	for _, id := range []string{"dynop.plugin.image", imgproc.PluginID} {
		st, err := h.Plugin(id)
		if err != nil {
			fmt.Fprintf(out, "%s: %v\n", id, err)
			continue
		}
		fmt.Fprintf(out, "%-20s %-9s refs=%d starts=%d stops=%d\n", id, st.State, st.Refs, st.Starts, st.Stops)
	}
}

// writePatterns writes test patterns of three sizes into dir as PNG files.
func writePatterns(dir string) ([]string, error) {
	var paths []string
	for i, size := range [][2]int{{320, 240}, {200, 200}, {97, 61}} {
		img := goimage.NewRGBA(goimage.Rect(0, 0, size[0], size[1]))
		for y := range size[1] {
			for x := range size[0] {
				img.Set(x, y, color.RGBA{uint8(x * 255 / size[0]), uint8(y * 255 / size[1]), uint8((x ^ y) * (i + 1)), 255})
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("pattern%d.png", i))
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		err = png.Encode(f, img)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
