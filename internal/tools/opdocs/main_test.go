package main

import (
	"bytes"
	"context"
	"fmt"
	"go/doc/comment"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
)

// TestMain serves as the scanner child process first, when a host of the
// tests starts this binary as one.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	os.Exit(m.Run())
}

// TestOperatorsDoc: docs/operators.md is what the generator writes. It is
// strict wherever the generator builds every plugin, as CI does. Where
// this machine cannot build a native plugin (no C compiler, no codec
// libraries), the regenerated file says so in place of the plugin's
// operators; if the committed file documents them, the two cannot be
// compared here and the test is skipped, naming what is missing. A file
// generated without a plugin fails wherever the plugin builds.
func TestOperatorsDoc(t *testing.T) {
	root := cbuild.Root()
	doc, err := Generate(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(File)))
	if err != nil {
		t.Fatalf("%v: run go run ./internal/tools/opdocs", err)
	}
	switch skip, fail := compare(want, doc); {
	case fail != "":
		t.Fatal(fail)
	case skip != "":
		t.Skip(skip)
	}
}

// compare says whether the committed file want is what the generator
// wrote, doc: "" twice if it is; why the test is skipped if this machine
// lacks what the file was generated with; else why it fails.
func compare(want []byte, doc *Doc) (skip, fail string) {
	if bytes.Equal(doc.Markdown, want) {
		return "", ""
	}
	for _, m := range doc.Missing {
		if !bytes.Contains(want, []byte("**Not documented: "+m.ID+"**")) {
			return fmt.Sprintf("cannot check %s here: %s cannot be documented here (%s), and the file documents it; CI, which builds it, checks the file", File, m.ID, m.Why), ""
		}
	}
	if runtime.GOARCH != "amd64" {
		return fmt.Sprintf("cannot check %s on %s: it lists the x86-64 CPU variants", File, runtime.GOARCH), ""
	}
	return "", fmt.Sprintf("%s is out of date: run go run ./internal/tools/opdocs\n%s", File, firstDiff(want, doc.Markdown))
}

// TestWithoutNativePlugins: without the codec libraries, or without a C
// compiler, the file names the plugins it cannot document, and checking
// the full file against it is skipped; a file generated so fails where
// they build.
func TestWithoutNativePlugins(t *testing.T) {
	if _, err := cbuild.CompilerCommand(false); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	full, err := Generate(ctx, cbuild.Root())
	if err != nil {
		t.Fatal(err)
	}
	if full.Missing != nil {
		t.Skipf("the full file cannot be generated here: %v", full.Missing)
	}
	saved := cbuild.CodecHeaders
	cbuild.CodecHeaders = append(append([]string{}, saved...), "dynop_no_such_header.h")
	noCodec, err := Generate(ctx, cbuild.Root())
	cbuild.CodecHeaders = saved
	if err != nil {
		t.Fatal(err)
	}
	savedBLAS := cbuild.BLASHeaders
	cbuild.BLASHeaders = append(append([]string{}, savedBLAS...), "dynop_no_such_header.h")
	noBLAS, err := Generate(ctx, cbuild.Root())
	cbuild.BLASHeaders = savedBLAS
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC", "dynop-no-such-cc")
	noCC, err := Generate(ctx, cbuild.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		doc     *Doc
		missing []string
	}{
		{"no codec libraries", noCodec, []string{"dynop.plugin.codec"}},
		{"no OpenBLAS", noBLAS, []string{"dynop.plugin.blas"}},
		{"no C compiler", noCC, []string{"dynop.plugin.imgproc", "dynop.plugin.codec", "dynop.plugin.blas"}},
	} {
		var ids []string
		for _, m := range c.doc.Missing {
			ids = append(ids, m.ID)
			if !bytes.Contains(c.doc.Markdown, []byte("**Not documented: "+m.ID+"**")) {
				t.Errorf("%s: the file does not say %s is missing", c.name, m.ID)
			}
			ns := strings.TrimPrefix(m.ID, "dynop.plugin.")
			if bytes.Contains(c.doc.Markdown, []byte("### "+ns+".")) {
				t.Errorf("%s: the file documents operators of %s", c.name, m.ID)
			}
		}
		if !slices.Equal(ids, c.missing) {
			t.Errorf("%s: missing %v, want %v", c.name, ids, c.missing)
		}
		if skip, fail := compare(full.Markdown, c.doc); skip == "" || fail != "" {
			t.Errorf("%s: checking the full file: skip %q, fail %q; want a skip", c.name, skip, fail)
		}
		if skip, fail := compare(c.doc.Markdown, full); skip != "" || !strings.Contains(fail, "out of date: run go run ./internal/tools/opdocs") {
			t.Errorf("%s: checking a file generated so where everything builds: skip %q, fail %q; want a failure", c.name, skip, fail)
		}
	}
	if !strings.Contains(noCodec.Missing[0].Why, "apt-get install libturbojpeg0-dev libpng-dev libwebp-dev") {
		t.Errorf("without the codec libraries: %q", noCodec.Missing[0].Why)
	}
	if !strings.Contains(noBLAS.Missing[0].Why, "apt-get install libopenblas-dev") {
		t.Errorf("without OpenBLAS: %q", noBLAS.Missing[0].Why)
	}
}

// firstDiff shows the first line where the file and the generator's
// output differ.
func firstDiff(file, gen []byte) string {
	a, b := strings.Split(string(file), "\n"), strings.Split(string(gen), "\n")
	for i := range max(len(a), len(b)) {
		la, lb := "(end of file)", "(end of file)"
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb {
			return fmt.Sprintf("line %d of the file:\n\t%s\nthe generator writes:\n\t%s", i+1, la, lb)
		}
	}
	return "(no line differs)"
}

// TestSubjectNames: a paragraph is about the operators its subject names,
// the capitalized words it starts with, as doc links or bare, joined by
// commas and "and".
func TestSubjectNames(t *testing.T) {
	var p comment.Parser
	for _, c := range []struct {
		text  string
		short string
		want  bool
	}{
		{"[Resize] (width, height: 1 to 1<<20) resamples images.", "Resize", true},
		{"Resize interpolates bilinearly.", "Resize", true},
		{"Adjust, Gamma and Invert take uint8.", "Gamma", true},
		{"Adjust, Gamma and Invert take uint8.", "Invert", true},
		{"Grayscale, and Decode to one channel, compute luma.", "Decode", true},
		{"Images are HWC tensors; Resize reads them.", "Resize", false},
		{"The plugin's pass attaches Grayscale.", "Grayscale", false},
		{"[Grayscale] is bit-identical to image.Grayscale.", "Resize", false},
		{"JPEG decodes with libjpeg-turbo.", "Decode", false},
	} {
		d := p.Parse(c.text)
		par, ok := d.Content[0].(*comment.Paragraph)
		if !ok {
			t.Fatalf("%q: not a paragraph", c.text)
		}
		if got := subjectNames(par.Text, c.short); got != c.want {
			t.Errorf("subjectNames(%q, %s) = %v, want %v", c.text, c.short, got, c.want)
		}
	}
}

// TestDefinition: an operator's paragraphs with the code and lists after
// them, or the section its paragraph opens under a heading of its name;
// links to the package's operators go to their sections, others to
// pkg.go.dev.
func TestDefinition(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plugins", "fake")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `// Package fake is a plugin.
//
// [Blur] blurs, as [op.Pointwise] says:
//
//	out = blur(in)
//
// Blur also rounds.
//
// Images are HWC.
//
// # Read
//
// [Read] reads. Arguments:
//
//   - path: a file.
//
// Read fails on a missing file.
//
// # Other
//
// Nothing about Read.
package fake

import "github.com/dynop/dynop/op"

// Blur and Read are operator names.
const (
	Blur = "fake.Blur"
	Read = "fake.Read"
)

var _ op.Operator
`
	if err := os.WriteFile(filepath.Join(dir, "fake.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	defs, err := loadDefinitions(root, "plugins/fake")
	if err != nil {
		t.Fatal(err)
	}
	if defs.file != "plugins/fake/fake.go" {
		t.Errorf("doc file %q", defs.file)
	}
	anchor := func(name string) string {
		if slices.Contains([]string{"fake.Blur", "fake.Read"}, name) {
			return "#" + strings.ReplaceAll(name, ".", "")
		}
		return ""
	}
	for short, want := range map[string]string{
		"Blur": "[Blur](#fakeBlur) blurs, as [op.Pointwise](https://pkg.go.dev/github.com/dynop/dynop/op#Pointwise) says:\n\n\tout = blur(in)\n\nBlur also rounds.\n",
		"Read": "[Read](#fakeRead) reads. Arguments:\n\n  - path: a file.\n\nRead fails on a missing file.\n",
		"Crop": "",
	} {
		if got := defs.Definition(short, anchor); got != want {
			t.Errorf("Definition(%s) =\n%q\nwant\n%q", short, got, want)
		}
	}
}

// TestOpenCVTable: a test that mentions OpenCV and is not in the table
// fails generation, naming it; the table's own tests are all found.
func TestOpenCVTable(t *testing.T) {
	found, err := findOpenCVTests(cbuild.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range openCV {
		if !slices.Contains(found, c.file+": "+c.fn) {
			t.Errorf("%s: %s not found among %v", c.file, c.fn, found)
		}
	}
	root := t.TempDir()
	test := "package x\n\nimport \"testing\"\n\n// TestAgainstOpenCV compares with cv2.GaussianBlur.\nfunc TestAgainstOpenCV(t *testing.T) {}\n\nfunc TestOther(t *testing.T) {}\n"
	if err := os.WriteFile(filepath.Join(root, "x_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err = findOpenCVTests(root)
	if err != nil || !slices.Equal(found, []string{"x_test.go: TestAgainstOpenCV"}) {
		t.Fatalf("findOpenCVTests = %v, %v", found, err)
	}
	_, err = checkOpenCV(root, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "x_test.go: TestAgainstOpenCV mentions OpenCV, and the openCV table of internal/tools/opdocs does not say what it compares") {
		t.Errorf("checkOpenCV with an unlisted test: %v", err)
	}
	// An entry of noCounterpart must name an operator there is.
	if err == nil || !strings.Contains(err.Error(), "the noCounterpart table of internal/tools/opdocs names operator image.Read, and there is no such operator") {
		t.Errorf("checkOpenCV without the operators noCounterpart names: %v", err)
	}
}
