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
// once. Problems are [*Error]s at the input's position, joined.
func (s *Spec) files(in input) ([]string, error) {
	var files []string
	var errs errorList
	seen := map[string]bool{}
	for i, pattern := range in.files {
		matches, err := s.expand(pattern)
		if err != nil {
			errs.add(in.pos, fmt.Sprintf("inputs.%s.files[%d]", in.name, i), err, fmt.Sprintf("%q: %v", pattern, err))
			continue
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return files, nil
}

// expand returns the files pattern stands for, sorted.
func (s *Spec) expand(pattern string) ([]string, error) {
	path := filepath.Clean(pattern)
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.dir, path)
	}
	if strings.ContainsAny(pattern, "*?[") {
		return glob(path)
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case info.IsDir():
		return images(path)
	}
	return []string{path}, nil
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
