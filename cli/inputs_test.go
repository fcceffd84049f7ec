package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/pipeline"
)

// TestInputOverrides: --in NAME=PATH names an input; a value whose part
// before "=" is no input's name is a path when it exists as one (a file
// or a glob that matches) or has a separator in that part, and otherwise
// an error that lists the inputs and suggests the nearest.
func TestInputOverrides(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.yaml")
	two := filepath.Join(dir, "two.yaml")
	os.WriteFile(one, []byte("inputs: {photos: {files: [in/]}}\noperators:\n  - {name: d, op: image.Decode, inputs: [photos]}\noutputs: {o: {from: d}}\n"), 0o644)
	os.WriteFile(two, []byte("inputs: {photos: {files: [in/]}, masks: {files: [m/]}}\noperators:\n  - {name: d, op: image.Decode, inputs: [photos]}\n  - {name: e, op: image.Decode, inputs: [masks]}\noutputs: {o: {from: d}, p: {from: e}}\n"), 0o644)
	load := func(file string) *pipeline.Spec {
		spec, err := pipeline.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	specOne, specTwo := load(one), load(two)
	t.Chdir(dir)
	for _, f := range []string{"a=b.png", "c=1.png", "c=2.png"} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		spec *pipeline.Spec
		in   []string
		name string
		want []string
	}{
		{specOne, []string{"photos=x.png"}, "photos", []string{"x.png"}},
		{specOne, []string{"x.png"}, "photos", []string{"x.png"}},             // PATH alone
		{specOne, []string{"a=b.png"}, "photos", []string{"a=b.png"}},         // a file with "="
		{specOne, []string{"c=*.png"}, "photos", []string{"c=*.png"}},         // a glob with "=" that matches
		{specOne, []string{"sub/a=b.png"}, "photos", []string{"sub/a=b.png"}}, // a separator: a path
		{specOne, []string{"photos=a=b.png"}, "photos", []string{"a=b.png"}},
		{specTwo, []string{"masks=m.png", "photos=p.png"}, "masks", []string{"m.png"}},
	} {
		got, err := inputOverrides(c.spec, c.in)
		if err != nil || len(got) != 1 && len(c.in) == 1 || strings.Join(got[c.name], ",") != strings.Join(c.want, ",") {
			t.Errorf("inputOverrides(%q) = %q, %v; want %s: %q", c.in, got, err, c.name, c.want)
		}
	}
	for _, c := range []struct {
		spec *pipeline.Spec
		in   string
		say  []string
	}{
		{specOne, "pics=photos_small", []string{`--in "pics=photos_small": "pics" is not an input of the pipeline, and no file "pics=photos_small" exists; the pipeline's inputs: photos`}},
		{specTwo, "mask=m.png", []string{`"mask" is not an input of the pipeline (did you mean "masks"?)`, "the pipeline's inputs: photos, masks"}},
		{specTwo, "x.png", []string{`--in "x.png": the pipeline has 2 inputs (photos, masks): give NAME=PATH`}},
		{specOne, "photos=", []string{`--in "photos=": empty path`}},
	} {
		_, err := inputOverrides(c.spec, []string{c.in})
		if err == nil || !errors.Is(err, errUsage) {
			t.Errorf("inputOverrides(%q): %v, want a usage error", c.in, err)
			continue
		}
		for _, s := range c.say {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("inputOverrides(%q): %v; want it to say %q", c.in, err, s)
			}
		}
	}
}
