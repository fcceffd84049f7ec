package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// imageExts are the extensions, in lower case, of the files taken from a
// directory.
var imageExts = []string{".png", ".jpg", ".jpeg"}

// files expands the patterns of in, relative to s.dir: a file, which must
// exist; a directory, for its *.png, *.jpg and *.jpeg files (in any case,
// not in subdirectories); or a glob, as [filepath.Glob] reads it, for the
// files it matches. Each pattern must give at least one file. The result
// holds clean paths, in pattern order, each pattern's sorted, each path
// once, and beside each its path relative to its pattern's root (the
// directory, the glob's directory before its first wildcard, the file's
// directory), with forward slashes: what a shard is chosen by. Problems
// are [*Error]s at the input's position, joined.
func (s *Spec) files(in input) (files, rels []string, err error) {
	var errs errorList
	seen := map[string]bool{}
	for i, pattern := range in.files {
		root, matches, err := s.expand(pattern)
		if err != nil {
			errs.add(in.pos, fmt.Sprintf("inputs.%s.files[%d]", in.name, i), err, fmt.Sprintf("%q: %v", pattern, err))
			continue
		}
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

// expand returns the files pattern stands for, sorted, and its root.
func (s *Spec) expand(pattern string) (root string, files []string, err error) {
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
		files, err = images(path)
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

// images returns the image files in dir, sorted.
func images(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && slices.Contains(imageExts, strings.ToLower(filepath.Ext(e.Name()))) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.png, *.jpg or *.jpeg files in directory %s", dir)
	}
	return files, nil
}
