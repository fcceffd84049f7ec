package pipeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// imageExts are the extensions, in lower case, of the files taken from a
// directory: what the decoders read (image.Decode PNG and JPEG, the
// codec plugin WebP too).
var imageExts = []string{".png", ".jpg", ".jpeg", ".webp"}

// otherImageExts are extensions of images no decoder reads: a directory's
// files with them are left out, and the run says so (Spec.leftOut).
var otherImageExts = []string{".gif", ".bmp", ".tif", ".tiff", ".heic", ".heif", ".avif", ".jxl"}

// leftOut returns the files of in's directories (below them too, if in is
// recursive) that look like images no decoder reads, which a directory
// leaves out: a run warns about them rather than ignore them silently.
func (s *Spec) leftOut(in input) []string {
	var out []string
	for _, pattern := range in.files {
		path := pattern
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.dir, path)
		}
		if info, err := os.Stat(path); err != nil || !info.IsDir() {
			continue
		}
		filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil // the listing of inputs reports it
			case d.IsDir() && p != path && !in.recursive:
				return filepath.SkipDir
			case !d.IsDir() && slices.Contains(otherImageExts, strings.ToLower(filepath.Ext(d.Name()))):
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// files expands the patterns of in, relative to s.dir: a file, which must
// exist; a directory, for its *.png, *.jpg, *.jpeg and *.webp files (in any case,
// not in subdirectories); or a glob, as [filepath.Glob] reads it, for the
// files it matches. Each pattern must give at least one file. The result
// holds clean paths, in pattern order, each pattern's sorted, each path
// once, and beside each its path relative to its pattern's root (the
// directory, the glob's directory before its first wildcard, the file's
// directory), with forward slashes: what a shard is chosen by. Problems
// are [*Error]s at the input's position, joined.
//
// An input's list, if it has one, adds the files it names: one path per
// line, relative to the list's directory (standard input's, stdin: the
// working directory's), blank lines and lines starting with # left out.
// Each must be a file; their root is the list's directory.
func (s *Spec) files(in input, stdin io.Reader) (files, rels []string, err error) {
	var errs errorList
	seen := map[string]bool{}
	type found struct {
		root    string
		matches []string
	}
	var all []found
	for i, pattern := range in.files {
		root, matches, err := s.expand(pattern, in.recursive)
		if err != nil {
			errs.add(in.pos, fmt.Sprintf("inputs.%s.files[%d]", in.name, i), err, fmt.Sprintf("%q: %v", pattern, err))
			continue
		}
		all = append(all, found{root, matches})
	}
	if in.list != "" {
		root, matches, err := s.readList(in.list, stdin)
		if err != nil {
			errs.add(in.listPos, fmt.Sprintf("inputs.%s.list", in.name), err, fmt.Sprintf("%q: %v", in.list, err))
		} else {
			all = append(all, found{root, matches})
		}
	}
	for _, f := range all {
		root, matches := f.root, f.matches
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
				rel, err := filepath.Rel(root, m)
				if err != nil {
					rel = filepath.Base(m)
				}
				rels = append(rels, filepath.ToSlash(rel))
			}
		}
	}
	if err := errs.err(); err != nil {
		return nil, nil, err
	}
	return files, rels, nil
}

// readList reads the list of files at list (relative to s.dir; "-":
// stdin) and returns its directory and the files, each checked to be a
// file. Problems name the line.
func (s *Spec) readList(list string, stdin io.Reader) (root string, files []string, err error) {
	var r io.Reader
	if list == "-" {
		if root, err = os.Getwd(); err != nil {
			return "", nil, err
		}
		r = stdin
	} else {
		path := filepath.Clean(list)
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.dir, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return "", nil, err
		}
		defer f.Close()
		root, r = filepath.Dir(path), f
	}
	var problems []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path := filepath.Clean(line)
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		switch fi, err := os.Stat(path); {
		case err != nil:
			problems = append(problems, fmt.Errorf("line %d: %w", n, err))
		case fi.IsDir():
			problems = append(problems, fmt.Errorf("line %d: %s is a directory; a list names files", n, path))
		default:
			files = append(files, path)
		}
		if len(problems) == 10 {
			problems = append(problems, errors.New("and maybe more"))
			break
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return "", nil, errors.Join(problems...)
	}
	if len(files) == 0 {
		return "", nil, errors.New("lists no files")
	}
	return root, files, nil
}

// expand returns the files pattern stands for, sorted, and its root; a
// directory's images come from its subdirectories too if recursive.
func (s *Spec) expand(pattern string, recursive bool) (root string, files []string, err error) {
	path := filepath.Clean(pattern)
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.dir, path)
	}
	if strings.ContainsAny(pattern, "*?[") {
		files, err = glob(path)
		return globRoot(path), files, err
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return "", nil, err
	case info.IsDir():
		files, err = images(path, recursive)
		return path, files, err
	}
	return filepath.Dir(path), []string{path}, nil
}

// globRoot returns the directory of pattern before its first element
// with a wildcard.
func globRoot(pattern string) string {
	dir := pattern
	for strings.ContainsAny(dir, "*?[") {
		dir = filepath.Dir(dir)
	}
	return dir
}

// glob returns the files, not directories, that pattern matches.
func glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	files := slices.DeleteFunc(matches, func(path string) bool {
		info, err := os.Stat(path)
		return err == nil && info.IsDir()
	})
	if len(files) == 0 {
		return nil, errors.New("matches no files")
	}
	slices.Sort(files)
	return files, nil
}

// images returns the image files in dir, and if recursive in its
// subdirectories, sorted (a directory's files before its
// subdirectories', each by name).
func images(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != dir && !recursive:
			return filepath.SkipDir
		case !d.IsDir() && slices.Contains(imageExts, strings.ToLower(filepath.Ext(d.Name()))):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		where := "directory " + dir
		if recursive {
			where += " or below it"
		}
		return nil, fmt.Errorf("no *.png, *.jpg, *.jpeg or *.webp files in %s", where)
	}
	return files, nil
}
