package pipeline

import (
	"errors"
	"github.com/dynop/dynop/schema"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// valid is a small valid file; parseErrors change it.
const valid = `inputs:
  photos:
    files: "*.png"
operators:
  - name: decode
    op: img.Decode
    inputs: [photos]
outputs:
  out:
    from: decode
`

var parseErrors = []errorCase{
	// The file as a whole.
	{name: "syntax", yaml: "inputs:\n  photos: {files: x}\noperators\noutputs: {}\n",
		want: "p.yaml:3:1: YAML syntax error: ", words: []string{"could not find expected ':'"}},
	{name: "unclosed list", yaml: "inputs:\n  photos: {files: [a,\n",
		want: "p.yaml:2:1: YAML syntax error: ", words: []string{"did not find expected node content"}},
	{name: "empty", yaml: "", want: "p.yaml:1:1: the file is empty"},
	{name: "comments only", yaml: "# nothing yet\n", want: "p.yaml:1:1: the file is empty"},
	{name: "top level list", yaml: "- inputs\n- operators\n",
		want: "p.yaml:1:1: the top level must be a mapping", words: []string{"not a list"}},
	{name: "top level scalar", yaml: "hello\n",
		want: "p.yaml:1:1: the top level must be a mapping", words: []string{`not "hello"`}},
	{name: "two documents", yaml: valid + "---\nname: more\n",
		want: "p.yaml:11:1: a second YAML document"},
	{name: "broken second document", yaml: valid + "---\nname: [\n",
		want: "p.yaml:12:1: YAML syntax error: did not find expected node content"},

	// Unknown fields.
	{name: "unknown top-level field", yaml: "bach_size: 4\n" + valid,
		want: `p.yaml:1:1: bach_size: unknown field "bach_size" (did you mean "batch_size"?)`},
	{name: "unknown top-level field, no suggestion", yaml: valid + "threads: 4\n",
		want: `p.yaml:11:1: threads: unknown field "threads" (known: version, name, batch_size, on_error, inputs, operators, outputs)`},
	{name: "unknown operator field", yaml: "inputs:\n  photos: {files: x}\noperators:\n  - nme: decode\n    name: decode\n    op: img.Decode\noutputs:\n  out: {from: decode}\n",
		want: `p.yaml:4:5: operators[0].nme: unknown field "nme" (did you mean "name"?)`},
	{name: "unknown input field", yaml: "inputs:\n  photos:\n    file: x\n    files: x\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: `p.yaml:3:5: inputs.photos.file: unknown field "file" (did you mean "files"?)`},
	{name: "unknown output field", yaml: valid + "    formt: png\n",
		want: `p.yaml:11:5: outputs.out.formt: unknown field "formt" (did you mean "format"?)`},

	// Kinds.
	{name: "inputs is a list", yaml: "inputs: [photos]\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:9: inputs: want a mapping, got a list"},
	{name: "operators is a mapping", yaml: "inputs: {photos: {files: x}}\noperators: {name: a, op: img.Decode}\noutputs: {out: {from: a}}\n",
		want: "p.yaml:2:12: operators: want a list, got a mapping"},
	{name: "operator is a string", yaml: "inputs: {photos: {files: x}}\noperators: [decode]\noutputs: {out: {from: photos}}\n",
		want: `p.yaml:2:13: operators[0]: want a mapping, got "decode"`},
	{name: "operator args is a list", yaml: "inputs: {photos: {files: x}}\noperators:\n  - {name: a, op: img.Decode, args: [3]}\noutputs: {out: {from: a}}\n",
		want: "p.yaml:3:37: operators[0].args: want a mapping, got a list"},
	{name: "argument is a mapping", yaml: "inputs: {photos: {files: x}}\noperators:\n  - {name: a, op: img.Decode, args: {channels: {n: 3}}}\noutputs: {out: {from: a}}\n",
		want: "p.yaml:3:48: operators[0].args.channels: want a value or a list of values, got a mapping"},
	{name: "argument is a nested list", yaml: "inputs: {photos: {files: x}}\noperators:\n  - {name: a, op: img.Decode, args: {axes: [1, [2]]}}\noutputs: {out: {from: a}}\n",
		want: "p.yaml:3:48: operators[0].args.axes[1]: want a number, string or boolean, got a list"},
	{name: "files is a mapping", yaml: "inputs: {photos: {files: {a: b}}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:26: inputs.photos.files: want a list, got a mapping"},
	{name: "op is a list", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: [img.Decode]}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:2:27: operators[0].op: want a non-empty string, got a list"},
	{name: "alias", yaml: "inputs: {photos: {files: &f x}}\noperators: [{name: a, op: img.Decode, inputs: *f}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:2:47: operators[0].inputs: want a list, got the alias *f (aliases are not supported)"},
	{name: "key is a list", yaml: valid + "[a]: 1\n",
		want: "p.yaml:11:1: want a name as key, got a list"},

	// Values.
	{name: "batch_size 0", yaml: "batch_size: 0\n" + valid,
		want: "p.yaml:1:13: batch_size: want 1 to 4096, got 0"},
	{name: "batch_size -1", yaml: "batch_size: -1\n" + valid,
		want: "p.yaml:1:13: batch_size: want 1 to 4096, got -1"},
	{name: "batch_size too large", yaml: "batch_size: 5000\n" + valid,
		want: "p.yaml:1:13: batch_size: want 1 to 4096, got 5000"},
	{name: "batch_size four", yaml: "batch_size: four\n" + valid,
		want: `p.yaml:1:13: batch_size: want an integer, got "four"`},
	{name: "batch_size fraction", yaml: "batch_size: 2.5\n" + valid,
		want: "p.yaml:1:13: batch_size: want an integer, got 2.5"},
	{name: "version 2", yaml: "version: 2\n" + valid,
		want: "p.yaml:1:10: version: unknown version 2; the only version is 1"},
	{name: "on_error", yaml: "on_error: halt\n" + valid,
		want: `p.yaml:1:11: on_error: want stop or skip, got "halt"`},
	{name: "on_error typo", yaml: "on_error: skp\n" + valid,
		want: `p.yaml:1:11: on_error: want stop or skip, got "skp" (did you mean "skip"?)`},
	{name: "format", yaml: valid + "    format: gif\n",
		want: `p.yaml:11:13: outputs.out.format: want png or jpeg or npy, got "gif"`},
	{name: "format jpg", yaml: valid + "    format: jpg\n",
		want: `p.yaml:11:13: outputs.out.format: want png or jpeg or npy, got "jpg" (did you mean "jpeg"?)`},
	{name: "quality 0", yaml: valid + "    format: jpeg\n    quality: 0\n",
		want: "p.yaml:12:14: outputs.out.quality: want 1 to 100, got 0"},
	{name: "quality 101", yaml: valid + "    format: jpeg\n    quality: 101\n",
		want: "p.yaml:12:14: outputs.out.quality: want 1 to 100, got 101"},
	{name: "quality for png", yaml: valid + "    quality: 80\n",
		want: "p.yaml:11:14: outputs.out.quality: quality is for jpeg only; the format is png"},
	{name: "invalid integer argument", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode, args: {channels: !!int three}}]\noutputs: {out: {from: a}}\n",
		want: `p.yaml:2:56: operators[0].args.channels: invalid int "three"`},

	// Required fields and emptiness.
	{name: "missing op", yaml: "inputs: {photos: {files: x}}\noperators:\n  - name: a\n    inputs: [photos]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:3:5: operators[0].op: required field is missing"},
	{name: "missing name", yaml: "inputs: {photos: {files: x}}\noperators:\n  - op: img.Decode\noutputs: {out: {from: photos}}\n",
		want: "p.yaml:3:5: operators[0].name: required field is missing"},
	{name: "missing operators", yaml: "inputs: {photos: {files: x}}\noutputs: {out: {from: photos}}\n",
		want: "p.yaml:1:1: operators: required field is missing"},
	{name: "missing files", yaml: "inputs: {photos: {}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:18: inputs.photos: want files (paths, directories, globs) or list (a file of paths, or - for standard input), or both"},
	{name: "recursive not a bool", yaml: "inputs: {photos: {files: x, recursive: deep}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:40: inputs.photos.recursive: want true or false, got \"deep\""},
	{name: "empty list", yaml: "inputs: {photos: {list: ''}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:25: inputs.photos.list: want a non-empty string"},
	{name: "missing from", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {dir: d}}\n",
		want: "p.yaml:3:16: outputs.out.from: required field is missing"},
	{name: "no inputs", yaml: "inputs: {}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:9: inputs: want at least one input"},
	{name: "no operators", yaml: "inputs: {photos: {files: x}}\noperators: []\noutputs: {out: {from: photos}}\n",
		want: "p.yaml:2:12: operators: want at least one operator"},
	{name: "no outputs", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode}]\noutputs: {}\n",
		want: "p.yaml:3:10: outputs: want at least one output"},
	{name: "no files", yaml: "inputs: {photos: {files: []}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:1:26: inputs.photos.files: want at least one file, directory or glob"},
	{name: "empty file name", yaml: "inputs: {photos: {files: [a, \"\"]}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: `p.yaml:1:30: inputs.photos.files[1]: want a non-empty string, got ""`},
	{name: "null op", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: null}]\noutputs: {out: {from: a}}\n",
		want: "p.yaml:2:27: operators[0].op: want a non-empty string, got nothing (null)"},

	// Names and references.
	{name: "duplicate name", yaml: "inputs: {photos: {files: x}}\noperators:\n  - {name: a, op: img.Decode, inputs: [photos]}\n  - {name: a, op: img.Decode, inputs: [photos]}\noutputs: {out: {from: a}}\n",
		want: `p.yaml:4:12: operators[1].name: duplicate name "a" (first used at p.yaml:3:12)`},
	{name: "name of an input", yaml: "inputs: {photos: {files: x}}\noperators:\n  - {name: photos, op: img.Decode, inputs: [photos]}\noutputs: {out: {from: photos}}\n",
		want: `p.yaml:3:12: operators[0].name: name "photos" is taken by the input at p.yaml:1:10`},
	{name: "name starts with a digit", yaml: "inputs: {photos: {files: x}}\noperators: [{name: 1st, op: img.Decode}]\noutputs: {out: {from: photos}}\n",
		want: `p.yaml:2:20: operators[0].name: invalid name "1st": want a letter or '_', then letters, digits, '_' or '-'`},
	{name: "name with a dot", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a.b, op: img.Decode}]\noutputs: {out: {from: photos}}\n",
		want: `p.yaml:2:20: operators[0].name: invalid name "a.b"`},
	{name: "input name with a space", yaml: "inputs: {my photos: {files: x}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: `p.yaml:1:10: inputs.my photos: invalid name "my photos"`},
	{name: "invalid output name", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode}]\noutputs: {-out: {from: a}}\n",
		want: `p.yaml:3:11: outputs.-out: invalid name "-out"`},
	{name: "invalid reference", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode, inputs: [photos.]}]\noutputs: {out: {from: a}}\n",
		want: `p.yaml:2:48: operators[0].inputs[0]: invalid reference "photos.": want "node" or "node.output"`},
	{name: "from is a list", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: [a]}}\n",
		want: `p.yaml:3:23: outputs.out.from: want a non-empty string, got a list`},
	{name: "invalid from", yaml: "inputs: {photos: {files: x}}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: 2a}}\n",
		want: `p.yaml:3:23: outputs.out.from: invalid reference "2a"`},

	// Duplicate keys.
	{name: "duplicate field", yaml: "batch_size: 2\n" + valid + "batch_size: 4\n",
		want: `p.yaml:12:1: batch_size: duplicate key "batch_size" (first at p.yaml:1:1)`},
	{name: "duplicate argument", yaml: "inputs: {photos: {files: x}}\noperators:\n  - name: a\n    op: img.Decode\n    args:\n      channels: 3\n      channels: 4\noutputs: {out: {from: a}}\n",
		want: `p.yaml:7:7: operators[0].args.channels: duplicate key "channels" (first at p.yaml:6:7)`},
	{name: "duplicate input", yaml: "inputs:\n  photos: {files: x}\n  photos: {files: y}\noperators: [{name: a, op: img.Decode}]\noutputs: {out: {from: a}}\n",
		want: `p.yaml:3:3: inputs.photos: duplicate key "photos" (first at p.yaml:2:3)`},
}

func TestParseErrors(t *testing.T) {
	for _, c := range parseErrors {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("p.yaml", []byte(c.yaml))
			if s != nil {
				t.Errorf("Parse returned a spec with the error")
			}
			c.check(t, err)
		})
	}
}

// TestParseAll checks that Parse reports every problem, in file order.
func TestParseAll(t *testing.T) {
	const file = `batch_size: 0
inputs:
  photos: {files: []}
operators:
  - {name: a, op: img.Decode, device: }
  - {nme: b, op: img.Decode}
outputs:
  out: {from: a, format: gif}
on_error: never
`
	_, err := Parse("p.yaml", []byte(file))
	want := []string{
		"p.yaml:1:13: batch_size: want 1 to 4096, got 0",
		"p.yaml:3:19: inputs.photos.files: want at least one file, directory or glob",
		"p.yaml:5:39: operators[0].device: want a non-empty string, got nothing (null)",
		`p.yaml:6:5: operators[1].name: required field is missing`,
		`p.yaml:6:6: operators[1].nme: unknown field "nme" (did you mean "name"?)`,
		`p.yaml:8:26: outputs.out.format: want png or jpeg or npy, got "gif"`,
		`p.yaml:9:11: on_error: want stop or skip, got "never"`,
	}
	list := problems(t, err)
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got errors\n%q\nwant\n%q", got, want)
	}
}

// TestParseDefaults checks the values of fields left out.
func TestParseDefaults(t *testing.T) {
	s, err := Parse("dir/p.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if s.file != "dir/p.yaml" || s.dir != "dir" || s.version != 1 || s.name != "" || s.batchSize != 8 || s.onError != onErrorStop {
		t.Errorf("got file %q, dir %q, version %d, name %q, batch size %d, on error %q", s.file, s.dir, s.version, s.name, s.batchSize, s.onError)
	}
	if n := s.operators[0]; n.device != schema.CPU || n.args != nil {
		t.Errorf("operator: got device %q, args %v", n.device, n.args)
	}
	if o := s.outputs[0]; o.format != "png" || o.quality != 0 || o.dir != "" {
		t.Errorf("output: got format %q, quality %d, dir %q", o.format, o.quality, o.dir)
	}
	if in := s.inputs[0]; !reflect.DeepEqual(in.files, []string{"*.png"}) {
		t.Errorf("one file pattern: got %q", in.files)
	}
}

// TestParseArgs checks the Go types of arguments and their positions.
func TestParseArgs(t *testing.T) {
	const file = `inputs: {photos: {files: x}}
operators:
  - name: a
    op: img.Any
    args:
      i: 3
      big: 0x10
      f: 2.5
      inf: .inf
      b: true
      s: text
      q: "3"
      n: null
      date: 2024-01-02
      list: [1, 2.5, x, false]
outputs: {out: {from: a}}
`
	s, err := Parse("p.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	n := s.operators[0]
	want := schema.Args{
		"i": int64(3), "big": int64(16), "f": 2.5, "inf": math.Inf(1), "b": true, "s": "text", "q": "3", "n": nil,
		"date": "2024-01-02", "list": []any{int64(1), 2.5, "x", false},
	}
	if !reflect.DeepEqual(n.args, want) {
		t.Errorf("got args %#v\nwant %#v", n.args, want)
	}
	if got, want := n.argPos["list"], (Pos{File: "p.yaml", Line: 15, Col: 7}); got != want {
		t.Errorf("position of list: got %v, want %v", got, want)
	}
	if len(n.argPos) != len(want) {
		t.Errorf("got %d argument positions, want %d", len(n.argPos), len(want))
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(valid), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.file != path || s.dir != dir {
		t.Errorf("got file %q, dir %q; want %q, %q", s.file, s.dir, path, dir)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
}
