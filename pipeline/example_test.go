package pipeline_test

import (
	"fmt"
	"log"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/pipeline"
)

// testRegistry returns a registry of test operators, among them
// img.Decode and img.Resize.
func testRegistry() *op.Registry { return pipeline.NewTestRegistry() }

func ExampleParse() {
	const file = `name: thumbnails
batch_size: 4
inputs:
  photos: {files: "images/*.png"}
operators:
  - name: small
    op: img.Resize
    inputs: [decode]
    args: {width: 128, height: 96}
  - name: decode
    op: img.Decode
    inputs: [photos]
outputs:
  thumbs: {from: small, dir: out}
`
	spec, err := pipeline.Parse("demo/thumbs.yaml", []byte(file))
	if err != nil {
		log.Fatal(err)
	}
	// The registry knows the operators img.Decode and img.Resize, among
	// others; Validate reads their schemas.
	if err := spec.Validate(testRegistry()); err != nil {
		log.Fatal(err)
	}
	// Options.Inputs may replace the files of these inputs.
	fmt.Println("inputs:", spec.Inputs())
	// Output:
	// inputs: [photos]
}

func ExampleSpec_Validate() {
	const file = `inputs:
  photos: {files: "images/*.png"}
operators:
  - name: decode
    op: img.Decode
    inputs: [photo]
  - name: small
    op: img.Resize
    inputs: [decode]
    args: {wdth: 128, height: 0}
outputs:
  thumbs: {from: smal}
`
	spec, err := pipeline.Parse("thumbs.yaml", []byte(file))
	if err != nil {
		log.Fatal(err)
	}
	// Every problem, in file order.
	fmt.Println(spec.Validate(testRegistry()))
	// Output:
	// thumbs.yaml:6:14: operators[0].inputs[0]: no operator or input is called "photo" (did you mean "photos"?)
	// thumbs.yaml:7:5: operators[1].args.width: invalid operator argument: operator "img.Resize": argument "width": required (int) but not given
	// thumbs.yaml:10:12: operators[1].args.wdth: invalid operator argument: operator "img.Resize": argument "wdth": unknown argument; did you mean "width"?
	// thumbs.yaml:10:31: operators[1].args.height: invalid operator argument: operator "img.Resize": argument "height": 0 is below the minimum 1
	// thumbs.yaml:12:18: outputs.thumbs.from: no operator or input is called "smal" (did you mean "small"?)
}
