package main

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// module is the repository's module path.
const module = "github.com/dynop/dynop"

// definitions is the doc comment of a plugin's Go package, parsed.
type definitions struct {
	importPath string
	file       string // the file with the package doc comment, repository-relative
	pkg        *doc.Package
	doc        *comment.Doc
}

// loadDefinitions parses the package doc comment of the Go package in the
// repository-relative directory dir (its files but the tests).
func loadDefinitions(root, dir string) (*definitions, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	docFile := ""
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(dir), name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		if f.Doc != nil && docFile == "" {
			docFile = dir + "/" + name
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	importPath := module + "/" + dir
	pkg, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &definitions{importPath: importPath, file: docFile, pkg: pkg, doc: pkg.Parser().Parse(pkg.Doc)}, nil
}

// Definition returns, as Markdown, what the package doc comment says of
// the operator whose name ends in short ("Resize" for imgproc.Resize),
// "" if nothing. It picks each paragraph whose subject names the
// operator — the paragraph starts with its short name, bare or as a doc
// link ("[Resize] resamples …", "Resize interpolates …", "Adjust, Gamma
// and Invert take …") — with the code blocks and lists right after it;
// where such a paragraph opens a section whose heading is the short name
// ("# Decode"), the whole section. anchor maps an operator's full name to
// its section in the file ("" if none), for the links the comment makes
// to operators ([Decode]).
func (d *definitions) Definition(short string, anchor func(name string) string) string {
	var picked []comment.Block
	blocks := d.doc.Content
	for i := 0; i < len(blocks); i++ {
		p, ok := blocks[i].(*comment.Paragraph)
		if !ok || !subjectNames(p.Text, short) {
			continue
		}
		end := i + 1
		if h, ok := blockAt(blocks, i-1).(*comment.Heading); ok && plain(h.Text) == short {
			for end < len(blocks) {
				if _, ok := blocks[end].(*comment.Heading); ok {
					break
				}
				end++
			}
		} else {
			for end < len(blocks) {
				switch blocks[end].(type) {
				case *comment.Code, *comment.List:
					end++
					continue
				}
				break
			}
		}
		picked = append(picked, blocks[i:end]...)
		i = end - 1
	}
	if picked == nil {
		return ""
	}
	pr := d.pkg.Printer()
	pr.DocLinkURL = func(l *comment.DocLink) string {
		if l.ImportPath == "" && l.Recv == "" {
			if a := anchor(shortNamespace(d.importPath) + "." + l.Name); a != "" {
				return a
			}
		}
		c := *l
		if c.ImportPath == "" {
			c.ImportPath = d.importPath
		}
		return c.DefaultURL("https://pkg.go.dev")
	}
	return string(pr.Markdown(&comment.Doc{Content: picked, Links: d.doc.Links}))
}

// shortNamespace is the operators' namespace of a plugin package: the
// last element of its import path ("imgproc").
func shortNamespace(importPath string) string {
	return importPath[strings.LastIndexByte(importPath, '/')+1:]
}

func blockAt(blocks []comment.Block, i int) comment.Block {
	if i < 0 || i >= len(blocks) {
		return nil
	}
	return blocks[i]
}

// subjectNames reports whether the paragraph's subject, the capitalized
// words it starts with joined by commas and "and" ("Adjust, Gamma and
// Invert take …", "[Decode] takes …"), includes short.
func subjectNames(text []comment.Text, short string) bool {
	words := strings.Fields(plain(text))
	for i := 0; i < len(words); i++ {
		if words[i] == "and" {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(words[i], ","), "["), "]")
		if name == "" || !unicode.IsUpper(rune(name[0])) || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
			return false
		}
		if name == short {
			return true
		}
		if !strings.HasSuffix(words[i], ",") && (i+1 == len(words) || words[i+1] != "and") {
			return false // the subject ends: "Images are …"
		}
	}
	return false
}

// plain is the text of a comment's inline elements, doc links in
// brackets as written.
func plain(text []comment.Text) string {
	var b strings.Builder
	for _, t := range text {
		switch t := t.(type) {
		case comment.Plain:
			b.WriteString(string(t))
		case comment.Italic:
			b.WriteString(string(t))
		case *comment.Link:
			b.WriteString(plain(t.Text))
		case *comment.DocLink:
			b.WriteString("[" + plain(t.Text) + "]")
		}
	}
	return b.String()
}
