package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseShard: --shard's text either parses into a shard that
// Validate accepts and that String writes back to the same shard, or is
// refused saying the rule.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", " 1 / 2 ", "3/2", "0/0", "-1/4", "a/b", "1", "1/2/3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want I/N") {
				t.Fatalf("ParseShard(%q): %v does not say the rule", s, err)
			}
			return
		}
		if err := sh.Validate(); err != nil {
			t.Fatalf("ParseShard(%q) = %v, which Validate refuses: %v", s, sh, err)
		}
		if again, err := ParseShard(sh.String()); err != nil || again != sh {
			t.Fatalf("ParseShard(%q) = %v, whose String %q parses as %v, %v", s, sh, sh.String(), again, err)
		}
	})
}

// FuzzReadList: a list of files, which anybody may write, is read
// without panicking; every file it returns exists and was named on a
// line, and a problem names its line.
func FuzzReadList(f *testing.F) {
	dir := f.TempDir()
	for _, name := range []string{"a.png", "b.jpg"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a.png\nb.jpg\n", "# c\n\n a.png \n", "missing\n", "sub\n", "", "a.png\r\nb.jpg", "../" + filepath.Base(dir) + "/a.png"} {
		f.Add(s)
	}
	spec := &Spec{dir: dir}
	list := filepath.Join(dir, "list.txt")
	f.Fuzz(func(t *testing.T, body string) {
		if err := os.WriteFile(list, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		root, files, err := spec.readList("list.txt", nil)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "line ") && msg != "lists no files" && !strings.Contains(msg, "token too long") {
				t.Fatalf("readList(%q): %v names no line", body, err)
			}
			return
		}
		if root != dir || len(files) == 0 {
			t.Fatalf("readList(%q) = %q, %q", body, root, files)
		}
		for _, file := range files {
			if fi, err := os.Stat(file); err != nil || fi.IsDir() || !strings.Contains(body, filepath.Base(file)) {
				t.Fatalf("readList(%q) returned %s, not a file it names: %v", body, file, err)
			}
		}
	})
}
