package pipeline

import (
	"context"
	"errors"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/schema"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/errdefs"
)

// graphOf returns a file with the given operators, an input "photos" and
// an output "out" of "first". Operators begin on line 4.
func graphOf(operators string) string {
	return "inputs:\n  photos: {files: x}\noperators:\n" + operators + "outputs:\n  out: {from: first}\n"
}

// argsPair is two operators: first, an img.Decode, and second, an img.Resize
// that takes the arguments args.
func argsPair(args string) string {
	return graphOf(`  - name: first
    op: img.Decode
    inputs: [photos]
  - name: second
    op: img.Resize
    inputs: [first]
    args: ` + args + "\n")
}

var validateErrors = []errorCase{
	// Operators and their arguments.
	{name: "unknown operator", yaml: graphOf("  - name: first\n    op: img.Decod\n    inputs: [photos]\n"),
		want: `p.yaml:5:9: operators[0].op: operator not found: "img.Decod"; did you mean "img.Decode"?`, is: errdefs.ErrNotFound},
	{name: "unknown argument", yaml: argsPair("{wdth: 8, width: 8, height: 8}"),
		want:  `p.yaml:10:12: operators[1].args.wdth: `,
		words: []string{`operator "img.Resize"`, `argument "wdth"`, `unknown argument; did you mean "width"?`}, is: schema.ErrArgument},
	{name: "argument type", yaml: argsPair("{width: big, height: 8}"),
		want:  `p.yaml:10:19: operators[1].args.width: `,
		words: []string{`argument "width"`, "want an int, got string big"}, is: schema.ErrArgument},
	{name: "missing required argument", yaml: argsPair("{width: 8}"),
		want:  `p.yaml:7:5: operators[1].args.height: `,
		words: []string{`argument "height"`, "required (int) but not given"}, is: schema.ErrArgument},
	{name: "argument out of range", yaml: argsPair("{width: 0, height: 8}"),
		want:  `p.yaml:10:19: operators[1].args.width: `,
		words: []string{"0 is below the minimum 1"}, is: schema.ErrArgument},
	{name: "argument not allowed", yaml: argsPair("{width: 8, height: 8, interp: cubic}"),
		want:  `p.yaml:10:41: operators[1].args.interp: `,
		words: []string{"cubic is not one of [linear nearest]"}, is: schema.ErrArgument},
	{name: "argument given twice", yaml: argsPair("{width: 8, height: 8, scale: 2, factor: 3}"),
		want:  `p.yaml:10:51: operators[1].args.factor: `,
		words: []string{`argument "scale"`, "given twice"}, is: schema.ErrArgument},
	{name: "list element", yaml: strings.Replace(graphOf("  - name: first\n    op: img.Split\n    inputs: [photos]\n    args: {axes: [1, x]}\n"),
		"{from: first}", "{from: first.left}", 1),
		want:  `p.yaml:7:18: operators[0].args.axes: `,
		words: []string{"element 1: want an int, got string x"}, is: schema.ErrArgument},
	{name: "no backend for the device", yaml: graphOf("  - name: first\n    op: img.Decode\n    inputs: [photos]\n    device: gpu\n"),
		want:  `p.yaml:7:13: operators[0].device: `,
		words: []string{`operator "img.Decode" on device gpu`, "no gpu backend (devices: cpu)"}, is: errdefs.ErrUnsupported},
	{name: "no backend for the default device", yaml: graphOf("  - name: first\n    op: img.Blur\n    inputs: [photos]\n"),
		want:  `p.yaml:4:5: operators[0].device: `,
		words: []string{"no cpu backend (devices: gpu)"}, is: errdefs.ErrUnsupported},
	{name: "no such device here", yaml: graphOf("  - name: first\n    op: img.Blur\n    inputs: [photos]\n    device: gpu\n"),
		want:  `p.yaml:7:13: operators[0].device: `,
		words: []string{"this machine has no gpu device"}, is: errdefs.ErrUnsupported},

	// Inputs of operators.
	{name: "too many inputs", yaml: graphOf("  - name: first\n    op: img.Decode\n    inputs: [photos, photos]\n"),
		want: `p.yaml:6:13: operators[0].inputs: img.Decode takes 1 input (encoded), got 2`},
	{name: "too few inputs", yaml: graphOf("  - name: first\n    op: img.Blend\n"),
		want: `p.yaml:4:5: operators[0].inputs: img.Blend takes 1 to 2 inputs (a, b; b optional), got 0`},
	{name: "more than the optional inputs", yaml: graphOf("  - name: first\n    op: img.Blend\n    inputs: [photos, photos, photos]\n"),
		want: `p.yaml:6:13: operators[0].inputs: img.Blend takes 1 to 2 inputs (a, b; b optional), got 3`},
	{name: "too few of two inputs", yaml: graphOf("  - name: first\n    op: img.Mask\n    inputs: photos\n"),
		want: `p.yaml:6:13: operators[0].inputs: img.Mask takes 2 inputs (images, mask), got 1`},
	{name: "inputs to an operator that takes none", yaml: graphOf("  - name: first\n    op: img.Read\n    inputs: [photos]\n    args: {paths: [a.png]}\n"),
		want: `p.yaml:6:13: operators[0].inputs: img.Read takes no inputs, got 1`},

	// References.
	{name: "unknown node", yaml: graphOf("  - name: first\n    op: img.Decode\n    inputs: [phots]\n"),
		want: `p.yaml:6:14: operators[0].inputs[0]: no operator or input is called "phots" (did you mean "photos"?)`},
	{name: "unknown node, no suggestion", yaml: graphOf("  - name: first\n    op: img.Decode\n    inputs: [camera]\n"),
		want: `p.yaml:6:14: operators[0].inputs[0]: no operator or input is called "camera"`},
	{name: "unknown output", yaml: strings.Replace(argsPair("{width: 8, height: 8}"), "inputs: [first]", "inputs: [first.imgs]", 1),
		want: `p.yaml:9:14: operators[1].inputs[0]: "first" (img.Decode) has no output "imgs"; its outputs: images`},
	{name: "output of an input", yaml: graphOf("  - name: first\n    op: img.Decode\n    inputs: [photos.data]\n"),
		want: `p.yaml:6:14: operators[0].inputs[0]: input "photos" has no output "data"; refer to it as "photos"`},
	{name: "which output", yaml: graphOf("  - name: halves\n    op: img.Split\n    inputs: [photos]\n  - name: first\n    op: img.Decode\n    inputs: [halves]\n"),
		want: `p.yaml:9:14: operators[1].inputs[0]: "halves" (img.Split) has 2 outputs (left, right): name one, as in "halves.left"`},
	{name: "operator without outputs", yaml: graphOf("  - name: sink\n    op: img.Sink\n    inputs: [photos]\n  - name: first\n    op: img.Decode\n    inputs: [sink]\n"),
		want: `p.yaml:9:14: operators[1].inputs[0]: "sink" (img.Sink) has no outputs`},
	{name: "dangling output", yaml: strings.Replace(graphOf("  - name: first\n    op: img.Decode\n    inputs: [photos]\n"), "{from: first}", "{from: frist}", 1),
		want: `p.yaml:8:15: outputs.out.from: no operator or input is called "frist"`},
	{name: "output of a node without outputs", yaml: graphOf("  - name: first\n    op: img.Sink\n    inputs: [photos]\n"),
		want: `p.yaml:8:15: outputs.out.from: "first" (img.Sink) has no outputs`},

	// Cycles.
	{name: "cycle", yaml: graphOf("  - name: first\n    op: img.Blend\n    inputs: [photos, c]\n  - name: b\n    op: img.Decode\n    inputs: [first]\n  - name: c\n    op: img.Decode\n    inputs: [b]\n"),
		want: `p.yaml:4:5: operators[0]: cycle: first -> b -> c -> first`},
	{name: "cycle entered late", yaml: graphOf("  - name: first\n    op: img.Decode\n    inputs: [c]\n  - name: b\n    op: img.Decode\n    inputs: [photos]\n  - name: c\n    op: img.Blend\n    inputs: [b, d]\n  - name: d\n    op: img.Decode\n    inputs: [c]\n"),
		want: `p.yaml:10:5: operators[2]: cycle: c -> d -> c`},
	{name: "self", yaml: graphOf("  - name: first\n    op: img.Blend\n    inputs: [photos, first]\n"),
		want: `p.yaml:4:5: operators[0]: cycle: first -> first`},
}

func TestValidateErrors(t *testing.T) {
	reg := testRegistry()
	for _, c := range validateErrors {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("p.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			c.check(t, s.Validate(reg))
		})
	}
}

// TestValidateAll checks that Validate reports every problem, in file
// order, and that it goes on past unknown operators.
func TestValidateAll(t *testing.T) {
	const file = `inputs: {photos: {files: x}}
operators:
  - {name: a, op: img.Nope, inputs: [photos]}
  - {name: b, op: img.Resize, inputs: [a], args: {width: -1}}
  - {name: c, op: img.Decode, inputs: [b.out]}
  - {name: d, op: img.Blend, inputs: [e, a]}
  - {name: e, op: img.Decode, inputs: [d]}
outputs:
  out: {from: x}
`
	s, err := Parse("p.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range problems(t, s.Validate(testRegistry())) {
		got = append(got, e.Pos.String()+" "+e.Field)
	}
	want := []string{
		"p.yaml:3:19 operators[0].op",
		"p.yaml:4:5 operators[1].args.height",
		"p.yaml:4:58 operators[1].args.width",
		"p.yaml:5:40 operators[2].inputs[0]",
		"p.yaml:6:5 operators[3]",
		"p.yaml:9:15 outputs.out.from",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got errors at\n%q\nwant\n%q", got, want)
	}
}

// full uses every feature of the format; its operators are out of order.
const full = `version: 1
name: demo
batch_size: 4
on_error: skip
inputs:
  photos:
    files: ["images/*.png", "more/"]
  masks: {files: masks/}
operators:
  - name: small
    op: img.Resize
    inputs: [decode]
    args: {width: 128, height: 96, factor: 0.5}
  - name: decode
    op: img.Decode
    inputs: photos
    args: {channels: 3}
    device: cpu
  - name: halves
    op: img.Split
    inputs: [small]
    args: {axes: [0, 1]}
  - name: mix
    op: img.Blend
    inputs: [halves.left, masks]
    args: {alpha: 1, invert: true}
  - name: sink
    op: img.Sink
    inputs: [mix.blended]
    args: {tags: [a, b]}
outputs:
  thumbs: {from: small, dir: out, format: jpeg, quality: 90}
  right: {from: halves.right}
  raw: {from: photos, dir: out}
`

func TestValidate(t *testing.T) {
	s, err := Parse("dir/full.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // Validate again finds the references it filled in valid
		if err := s.Validate(testRegistry()); err != nil {
			t.Fatal(err)
		}
	}
	if s.name != "demo" || s.batchSize != 4 || s.onError != onErrorSkip || s.version != 1 {
		t.Errorf("got name %q, batch size %d, on error %q, version %d", s.name, s.batchSize, s.onError, s.version)
	}
	if got := s.Inputs(); !reflect.DeepEqual(got, []string{"photos", "masks"}) {
		t.Errorf("Inputs() = %q", got)
	}
	pos := func(line, col int) Pos { return Pos{File: "dir/full.yaml", Line: line, Col: col} }
	wantInputs := []input{
		{name: "photos", files: []string{"images/*.png", "more/"}, pos: pos(6, 3)},
		{name: "masks", files: []string{"masks/"}, pos: pos(8, 3)},
	}
	if !reflect.DeepEqual(s.inputs, wantInputs) {
		t.Errorf("got inputs %+v\nwant %+v", s.inputs, wantInputs)
	}
	var refs []string
	for _, n := range s.operators {
		var in []string
		for _, r := range n.inputs {
			in = append(in, r.node+"|"+r.output+"@"+r.pos.String())
		}
		refs = append(refs, n.name+" "+n.operator+" "+string(n.device)+" <- "+strings.Join(in, ", "))
	}
	wantRefs := []string{
		"small img.Resize cpu <- decode|images@dir/full.yaml:12:14",
		"decode img.Decode cpu <- photos|@dir/full.yaml:16:13",
		"halves img.Split cpu <- small|resized@dir/full.yaml:21:14",
		"mix img.Blend cpu <- halves|left@dir/full.yaml:25:14, masks|@dir/full.yaml:25:27",
		"sink img.Sink cpu <- mix|blended@dir/full.yaml:29:14",
	}
	if !reflect.DeepEqual(refs, wantRefs) {
		t.Errorf("got operators\n%q\nwant\n%q", refs, wantRefs)
	}
	if got, want := s.operators[0].args, (schema.Args{"width": int64(128), "height": int64(96), "factor": 0.5}); !reflect.DeepEqual(got, want) {
		t.Errorf("got args %v, want %v", got, want)
	}
	if got, want := s.operators[0].pos, pos(10, 5); got != want {
		t.Errorf("got position %v, want %v", got, want)
	}
	wantOutputs := []output{
		{name: "thumbs", from: ref{node: "small", output: "resized", pos: pos(32, 18)}, dir: "out", format: "jpeg", quality: 90, pos: pos(32, 3)},
		{name: "right", from: ref{node: "halves", output: "right", pos: pos(33, 17)}, format: "png", pos: pos(33, 3)},
		{name: "raw", from: ref{node: "photos", pos: pos(34, 15)}, dir: "out", format: "png", pos: pos(34, 3)},
	}
	if !reflect.DeepEqual(s.outputs, wantOutputs) {
		t.Errorf("got outputs\n%#v\nwant\n%#v", s.outputs, wantOutputs)
	}
	if got, want := s.order(), []int{1, 0, 2, 3, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("order() = %v, want %v", got, want)
	}
}

func TestOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  string
		want []int
	}{
		{"file order", "  - {name: first, op: img.Decode, inputs: [photos]}\n  - {name: b, op: img.Decode, inputs: [photos]}\n", []int{0, 1}},
		{"chain backwards", "  - {name: first, op: img.Decode, inputs: [b]}\n  - {name: b, op: img.Decode, inputs: [c]}\n  - {name: c, op: img.Decode, inputs: [photos]}\n", []int{2, 1, 0}},
		// c becomes ready after a and b; it then comes before d, which
		// is later in the file.
		{"ties", "  - {name: first, op: img.Decode, inputs: [b]}\n  - {name: a, op: img.Decode, inputs: [photos]}\n  - {name: b, op: img.Decode, inputs: [a]}\n  - {name: d, op: img.Decode, inputs: [photos]}\n", []int{1, 2, 0, 3}},
		{"diamond", "  - {name: first, op: img.Blend, inputs: [b, c]}\n  - {name: b, op: img.Decode, inputs: [d]}\n  - {name: c, op: img.Decode, inputs: [d]}\n  - {name: d, op: img.Decode, inputs: [photos]}\n", []int{3, 1, 2, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("p.yaml", []byte(graphOf(c.ops)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(testRegistry()); err != nil {
				t.Fatal(err)
			}
			if got := s.order(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("order() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRefString(t *testing.T) {
	for _, c := range []struct {
		ref  ref
		want string
	}{
		{ref{node: "photos"}, "photos"},
		{ref{node: "halves", output: "left"}, "halves.left"},
	} {
		if got := c.ref.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.ref, got, c.want)
		}
	}
}

// TestTypesCheckedBeforeRunning: what each edge carries is known from
// the schemas before anything runs, so a float32 image into the PNG
// encoder, decoded pixels into a decoder, an image into an operator
// that takes none and a one-channel image into one that takes 3 or 4
// channels fail at Compile, at the
// reference's position, naming what was given and what is taken; the
// files are never read (issue 24).
func TestTypesCheckedBeforeRunning(t *testing.T) {
	h := runHost(t)
	for _, c := range []struct {
		extra, from string
		want        []string
	}{
		{"  - {name: tofloat, op: image.ToFloat, inputs: [gamma]}", "tofloat",
			[]string{`p.yaml:13:18: outputs.thumbs.from: image.Encode input "images" is given float32 HWC: it takes uint8|uint16 (the output "output" of "tofloat")`}},
		{"  - {name: again, op: image.Decode, inputs: [gamma]}", "again",
			[]string{`p.yaml:11:46: operators[4].inputs[0]: image.Decode input "encoded" is given uint8 HWC with 1 channel: it takes 1 dimension, not 3 (the output "corrected" of "gamma")`}},
		{"  - {name: gray2, op: image.Grayscale, inputs: [gamma]}", "gray2",
			[]string{`p.yaml:11:49: operators[4].inputs[0]: image.Grayscale input "images" is given uint8 HWC with 1 channel: it takes 3 or 4 channels (the output "corrected" of "gamma")`}},
		{"  - {name: tofloat, op: image.ToFloat, inputs: [photos]}\n  - {name: dec, op: image.Decode, inputs: [tofloat]}", "gamma",
			[]string{`operators[5].inputs[0]: image.Decode input "encoded" is given float32 1-D: it takes uint8 (the output "output" of "tofloat")`}},
	} {
		file := setup(t, 2, 2, "stop", c.extra, c.from)
		if err := os.RemoveAll(filepath.Join(filepath.Dir(file), "in")); err != nil { // never read
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(filepath.Dir(file), "in"), 0o755); err != nil {
			t.Fatal(err)
		}
		spec, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile(context.Background(), h, spec, Options{})
		testutil.WantErr(t, err, schema.ErrInputType, c.want...)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%v does not wrap ErrInvalid", err)
		}
	}
	// Fed from memory, the inputs are unknown: an operator reading one
	// directly is refused only when it reads files.
	file := setup(t, 1, 1, "stop", "  - {name: g2, op: image.Grayscale, inputs: [photos]}", "gamma")
	spec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(context.Background(), h, spec, Options{})
	testutil.WantErr(t, err, schema.ErrInputType, `image.Grayscale input "images" is given uint8 1-D: it takes 3 dimensions, not 1 (the input "photos")`)
	p, err := Compile(context.Background(), h, spec, Options{Memory: true})
	if err != nil {
		t.Fatalf("the same pipeline fed from memory: %v", err)
	}
	p.Close()
}
