package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// reader is image.Read.
type reader struct {
	paths []string
	sizes []int64 // as Setup found them
}

func newRead(args *schema.Values) (op.Impl, error) {
	return &reader{paths: args.Strings("paths")}, nil
}

// Setup stats every file: the output of file i has its size.
func (r *reader) Setup([]*tensor.Batch) ([]op.OutputDesc, error) {
	r.sizes = r.sizes[:0]
	shapes := make([][]int64, len(r.paths))
	for i, p := range r.paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("file %d: %w", i, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: file %d: %s is not a regular file (%v)", schema.ErrArgument, i, p, fi.Mode().Type())
		}
		r.sizes = append(r.sizes, fi.Size())
		shapes[i] = []int64{fi.Size()}
	}
	return []op.OutputDesc{{DType: tensor.Uint8, Shapes: shapes}}, nil
}

// Run reads every file straight into its output sample.
func (r *reader) Run(ctx context.Context, outputs, _ []*tensor.Batch) error {
	for i, out := range outputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fill(out, func(dst []uint8) error { return readFile(r.paths[i], r.sizes[i], dst) })
		if err != nil {
			return fmt.Errorf("file %d: %w", i, err)
		}
	}
	return nil
}

// readFile reads file path, which must have size bytes, into dst.
func readFile(path string, size int64, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	changed := func(now string) error {
		return fmt.Errorf("%w: %s had %d bytes in Setup, %s now", ErrChanged, path, size, now)
	}
	if fi, err := f.Stat(); err != nil {
		return err
	} else if fi.Size() != size {
		return changed(fmt.Sprintf("%d", fi.Size()))
	}
	if n, err := io.ReadFull(f, dst); errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) && size > 0 {
		return changed(fmt.Sprintf("%d", n))
	} else if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var one [1]byte
	if n, err := f.Read(one[:]); n > 0 {
		return changed("more")
	} else if err != nil && err != io.EOF {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// writer is image.Write.
type writer struct {
	dir   string
	names []string
}

func newWrite(args *schema.Values) (op.Impl, error) {
	w := &writer{dir: args.String("dir"), names: args.Strings("names")}
	if w.dir == "" {
		return nil, fmt.Errorf("%w: argument \"dir\" is empty; give a directory (\".\" for the current one)", schema.ErrArgument)
	}
	seen := make(map[string]int, len(w.names))
	for i, n := range w.names {
		if why := badName(n); why != "" {
			return nil, fmt.Errorf("%w: argument \"names\": element %d %q %s; want a plain file name", schema.ErrArgument, i, n, why)
		}
		if j, dup := seen[n]; dup {
			return nil, fmt.Errorf("%w: argument \"names\": elements %d and %d are both %q; each sample needs its own file", schema.ErrArgument, j, i, n)
		}
		seen[n] = i
	}
	return w, nil
}

// badName says what makes name unfit to be a file name in the directory,
// or "" if nothing does.
func badName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case name == "." || name == "..":
		return "names a directory"
	case strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, os.PathSeparator):
		return "contains a path separator"
	case strings.ContainsRune(name, 0):
		return "contains a NUL byte"
	}
	return ""
}

// Setup checks that there is one name per sample; Write has no outputs.
func (w *writer) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	if n := inputs[0].Len(); n != len(w.names) {
		return nil, fmt.Errorf("%w: a batch of %d samples, and %d names in argument \"names\"; want one name per sample", op.ErrInput, n, len(w.names))
	}
	return []op.OutputDesc{}, nil
}

// Run creates the directory and writes each sample to its file.
func (w *writer) Run(ctx context.Context, _, inputs []*tensor.Batch) error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return err
	}
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := elems[uint8](t)
		if err == nil {
			err = writeFile(w.dir, w.names[i], data)
		}
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// writeFile writes data to dir/name through a temporary file in dir that
// it syncs and renames into place. The file gets mode 0644.
func writeFile(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}
