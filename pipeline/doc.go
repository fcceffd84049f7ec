// Package pipeline reads pipeline files: YAML documents that name input
// files, a graph of operators and where to write results.
//
// A complete file:
//
//	version: 1          # optional; 1, the only version, by default
//	name: demo          # optional
//	batch_size: 4       # optional: 1 to 4096, 8 by default
//	on_error: skip      # optional: stop (the default) or skip an input file that cannot be processed
//	inputs:             # at least one, by name
//	  photos:
//	    # Files, directories (their *.png, *.jpg, *.jpeg and *.webp files) and
//	    # globs, relative to the pipeline file's directory; one string
//	    # is a list of one.
//	    files: ["images/*.png", "more/", "one.jpg"]
//	    recursive: true # optional: directories' subdirectories too
//	    # Optional, with files or instead: a file naming a file per line,
//	    # relative to its directory (# comments and blank lines left
//	    # out), or - for standard input (relative to the working
//	    # directory).
//	    list: batch-07.txt
//	operators:          # at least one; a graph, whatever the order
//	  - name: decode    # unique among operators and inputs: [A-Za-z_][A-Za-z0-9_-]*
//	    op: image.Decode
//	    # One reference per input of the operator, in order (optional
//	    # inputs may be left off): "node", a node's only output, or
//	    # "node.output". An input is referred to by its name.
//	    inputs: [photos]
//	    args: {channels: 3}
//	    device: cpu     # optional: cpu by default
//	  - name: small
//	    op: image.Resize
//	    inputs: [decode]
//	    args: {width: 128, height: 96}
//	outputs:            # at least one, by name
//	  thumbs:
//	    from: small     # a reference, as in inputs
//	    dir: out        # optional; relative to the pipeline file's directory
//	    format: jpeg    # optional: png (the default), jpeg (image.Encode) or npy (npy.Encode: NumPy's .npy)
//	    quality: 90     # optional, for jpeg only: 1 to 100
//
// [Parse] checks the file's syntax and structure; [Spec.Validate] checks it
// against the operators of a registry: operator names, arguments, inputs,
// references and cycles. Neither runs operator or plugin code. Both report
// every problem they find, each an [*Error] with the file, line and column
// and the field at fault, such as operators[1].args.width, so that a file
// can be fixed in one go.
//
// YAML aliases (*name) are not supported: an error would point at the
// anchor, away from the place that uses it.
//
// # Running
//
// [Compile] checks a Spec against a host's operator schemas before any
// plugin code runs, finds the input files, checks that every output
// directory can be written and builds the graph: an input node per
// input, a node per operator and an image.Encode node per output, then
// the host's passes (populate, the fusion of pointwise chains, and the
// passes plugins provide). [Pipeline.Run] feeds the input files to the
// graph batch by batch, as 1-D uint8 samples of their bytes, and writes
// each output sample to DIR/NAME.png (or .jpg), NAME being the first
// input's file name without its extension, made unique with "-2", "-3"…
// (outputs sharing a directory add "-OUTPUT"). An output that would
// replace an input file is refused.
//
// Outputs stream: each file is written atomically (a temporary file in
// its directory, renamed into place) as soon as its batch is done, and a
// journal (JSON lines, in the first output's directory) records each
// input finished, so a run that fails, is cancelled or is killed keeps
// what it finished, never a partial file, and [Options.Resume] finishes
// the rest. [Options.Atomic] makes a run all or nothing instead: outputs
// go to a hidden staging directory in each output directory and move
// into place only when every batch has run. Several workers share each
// batch ([Options.Workers], [Options.Prefetch]): each has its own
// instance of every operator, except those that declare themselves safe
// for concurrent calls ([op.SharedImpl], DYNOP_OPERATOR_CONCURRENT),
// made once and shared, and its own scratch arena. [Shard] splits a
// run's inputs among machines. A batch that fails runs again sample by
// sample to find the input at fault, which stops the run, naming the
// file, or with on_error: skip is left out and reported in the
// [Summary].
package pipeline
