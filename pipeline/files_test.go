package pipeline

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/testutil"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tree makes the files named, and their directories, under a temporary
// directory, and returns it.
func tree(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFiles(t *testing.T) {
	dir := tree(t,
		"images/b.png", "images/a.png", "images/c.PNG", "images/notes.txt", "images/d.JPeG", "images/e.jpg",
		"images/sub/f.png", "images/dir.png/g.png",
		"one.jpg", "other/h.png", "other/a.png",
	)
	spec := &Spec{dir: dir}
	for _, c := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"file", []string{"one.jpg"}, []string{"one.jpg"}},
		{"unclean file", []string{"./images/../one.jpg"}, []string{"one.jpg"}},
		{"directory", []string{"images"}, []string{"images/a.png", "images/b.png", "images/c.PNG", "images/d.JPeG", "images/e.jpg"}},
		{"directory with slash", []string{"other/"}, []string{"other/a.png", "other/h.png"}},
		{"glob", []string{"images/*.png"}, []string{"images/a.png", "images/b.png"}}, // not the directory dir.png
		{"glob over directories", []string{"*/a.png"}, []string{"images/a.png", "other/a.png"}},
		{"glob of a directory's files", []string{"images/*/*"}, []string{"images/dir.png/g.png", "images/sub/f.png"}},
		{"pattern order", []string{"other", "one.jpg", "images/b.png"}, []string{"other/a.png", "other/h.png", "one.jpg", "images/b.png"}},
		{"each file once", []string{"images/b.png", "images/*.png", "images/", "./one.jpg", "one.jpg"},
			[]string{"images/b.png", "images/a.png", "images/c.PNG", "images/d.JPeG", "images/e.jpg", "one.jpg"}},
		{"absolute", []string{filepath.Join(dir, "other", "h.png")}, []string{"other/h.png"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rels, err := spec.files(input{name: "photos", files: c.files}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rels) != len(got) {
				t.Fatalf("%d files, %d relative paths", len(got), len(rels))
			}
			want := make([]string, len(c.want))
			for i, w := range c.want {
				want[i] = filepath.Join(dir, filepath.FromSlash(w))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}

// TestFilesRelative: each file's path relative to its pattern's root,
// which sharding hashes: a directory's files by name, a glob's below
// its directory before the first wildcard, a file by its name.
func TestFilesRelative(t *testing.T) {
	dir := tree(t, "images/a.png", "images/sub/f.png", "other/a.png", "one.jpg")
	spec := &Spec{dir: dir}
	_, rels, err := spec.files(input{name: "photos", files: []string{"images", "*/a.png", "images/*/f.png", "one.jpg", filepath.Join(dir, "images", "sub", "f.png")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// images/a.png comes once, from the directory; images/sub/f.png
	// once, from the glob.
	if want := []string{"a.png", "other/a.png", "sub/f.png", "one.jpg"}; !reflect.DeepEqual(rels, want) {
		t.Errorf("relative paths %q, want %q", rels, want)
	}
}

func TestFilesErrors(t *testing.T) {
	dir := tree(t, "images/a.png", "empty/notes.txt", "empty/sub/b.png")
	spec := &Spec{dir: dir}
	at := Pos{File: "p.yaml", Line: 3, Col: 5}
	for _, c := range []struct {
		name  string
		file  string
		words []string
		is    error
	}{
		{"missing file", "missing.png", []string{`"missing.png": `, "no such file or directory"}, fs.ErrNotExist},
		{"glob matching nothing", "images/*.jpg", []string{`"images/*.jpg": matches no files`}, nil},
		{"glob matching directories only", "*", []string{`"*": matches no files`}, nil},
		{"directory without images", "empty", []string{`"empty": no *.png, *.jpg, *.jpeg or *.webp files in directory ` + filepath.Join(dir, "empty")}, nil},
		{"bad glob", "images/[a.png", []string{`"images/[a.png": syntax error in pattern`}, filepath.ErrBadPattern},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, _, err := spec.files(input{name: "photos", files: []string{"images/a.png", c.file}, pos: at}, nil)
			if files != nil {
				t.Errorf("got files %q with the error", files)
			}
			errorCase{want: "p.yaml:3:5: inputs.photos.files[1]: ", words: c.words, is: c.is}.check(t, err)
		})
	}
}

// TestFilesAll checks that Files reports every pattern that gives no
// files.
func TestFilesAll(t *testing.T) {
	spec := &Spec{dir: t.TempDir()}
	_, _, err := spec.files(input{name: "photos", files: []string{"a.png", "b/*.png", "c.png"}}, nil)
	list := problems(t, err)
	if len(list) != 3 {
		t.Fatalf("got %d errors, want 3: %v", len(list), err)
	}
	for i, e := range list {
		if want := fmt.Sprintf("inputs.photos.files[%d]", i); e.Field != want {
			t.Errorf("error %d: field %q, want %q", i, e.Field, want)
		}
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "matches no files") {
		t.Errorf("got %v", err)
	}
}

// TestFilesRecursiveAndLists: a recursive input takes a directory's
// images from its subdirectories too; a list names files relative to its
// directory, or, read from standard input, to the working directory,
// leaving out blank lines and comments; the files of both come once, in
// order, each with its path relative to its root.
func TestFilesRecursiveAndLists(t *testing.T) {
	dir := tree(t, "images/b.png", "images/sub/a.jpg", "images/sub/deeper/c.png", "images/sub/notes.txt", "data/x.bin", "data/y.bin")
	spec := &Spec{dir: dir}
	files, rels, err := spec.files(input{name: "photos", files: []string{"images"}, recursive: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"images/b.png", "images/sub/a.jpg", "images/sub/deeper/c.png"}
	for i, w := range want {
		want[i] = filepath.Join(dir, filepath.FromSlash(w))
	}
	if !reflect.DeepEqual(files, want) || !reflect.DeepEqual(rels, []string{"b.png", "sub/a.jpg", "sub/deeper/c.png"}) {
		t.Errorf("recursive: %q, %q", files, rels)
	}

	if err := os.WriteFile(filepath.Join(dir, "data", "files.txt"), []byte("# the samples\ny.bin\n\n  x.bin  \n"+filepath.Join(dir, "images", "b.png")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, rels, err = spec.files(input{name: "raw", list: "data/files.txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "data", "y.bin"), filepath.Join(dir, "data", "x.bin"), filepath.Join(dir, "images", "b.png")}; !reflect.DeepEqual(files, want) ||
		!reflect.DeepEqual(rels, []string{"y.bin", "x.bin", "../images/b.png"}) {
		t.Errorf("list: %q, %q", files, rels)
	}

	t.Chdir(filepath.Join(dir, "data"))
	files, _, err = spec.files(input{name: "raw", files: []string{"data/x.bin"}, list: "-"}, strings.NewReader("x.bin\ny.bin\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "data", "x.bin"), filepath.Join(dir, "data", "y.bin")}; !reflect.DeepEqual(files, want) {
		t.Errorf("files and a list on standard input: %q, want %q (x.bin once)", files, want)
	}
}

func TestListErrors(t *testing.T) {
	dir := tree(t, "data/x.bin", "data/sub/y.bin")
	spec := &Spec{dir: dir}
	at := Pos{File: "p.yaml", Line: 4, Col: 9}
	for _, c := range []struct {
		name, list, body string
		words            []string
	}{
		{"missing list", "nope.txt", "", []string{`"nope.txt": open `, "no such file or directory"}},
		{"missing file", "data/l.txt", "x.bin\n\nmissing.bin\n", []string{`"data/l.txt": line 3: stat `, "missing.bin: no such file or directory"}},
		{"a directory", "data/l.txt", "sub\n", []string{`"data/l.txt": line 1: ` + filepath.Join(dir, "data", "sub") + " is a directory; a list names files"}},
		{"empty", "data/l.txt", "# nothing\n\n", []string{`"data/l.txt": lists no files`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.body != "" {
				if err := os.WriteFile(filepath.Join(dir, c.list), []byte(c.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			files, _, err := spec.files(input{name: "raw", list: c.list, listPos: at}, nil)
			if files != nil {
				t.Errorf("got files %q with the error", files)
			}
			errorCase{want: "p.yaml:4:9: inputs.raw.list: ", words: c.words}.check(t, err)
		})
	}
}

// TestLeftOutImages: a directory takes PNG, JPEG and WebP files; images
// of other formats in it (GIF, BMP, TIFF, …) are left out, and a run says
// so in a warning naming the input, how many and the first, instead of
// ignoring them silently.
func TestLeftOutImages(t *testing.T) {
	h := runHost(t)
	file := setup(t, 2, 2, "stop", "", "gamma")
	in := filepath.Join(filepath.Dir(file), "in")
	for _, name := range []string{"a.gif", "b.BMP", "c.tiff", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(in, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var logs testutil.LogBuffer
	p, err := Compile(context.Background(), h, spec, Options{Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := len(p.files[0]); n != 2 {
		t.Errorf("%d files taken, want the 2 PNGs", n)
	}
	for _, want := range []string{"input files left out: no decoder reads their format", "input=photos", "count=3", "first=" + filepath.Join(in, "a.gif")} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
}
