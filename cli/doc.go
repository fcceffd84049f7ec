// Package cli is the dynop command line: it inspects the plugins a dynop
// host finds, runs pipelines of their operators, writes and checks plugin
// manifests and signatures, and scaffolds new plugins. Command dynop
// (cmd/dynop) is [Main] with the example plugins compiled in; a program
// that compiles in its own Go plugins builds its own dynop the same way:
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/dynop/dynop/cli"
//		_ "example.com/acme/blur" // a Go plugin: plugin.Register from init
//	)
//
//	func main() { os.Exit(cli.Main()) }
//
// The package registers the native and WebAssembly loaders, NVIDIA GPU
// detection and the image plugin (image.Decode and image.Encode, which
// pipelines need).
//
// Usage:
//
//	dynop version                    print the dynop build, the plugin API version and the Go toolchain
//	dynop list [--json] [--ops] [PATH...]
//	                                 list every plugin found with its state and why,
//	                                 or with --ops the operators they provide
//	dynop inspect [--json] PATH|ID|OPERATOR [PATH...]
//	                                 show one plugin (a plugin file, or a plugin's ID)
//	                                 or one operator's schema and CPU variants
//	dynop bench [--shape S] [--dtype T] [--batch N] [--time D] [--arg K=V] OPERATOR [PATH...]
//	                                 time each variant of an operator this CPU runs
//	dynop run [flags] PIPELINE.yaml  run a pipeline file (see package pipeline)
//	                                 and write its outputs; flags --in, --out,
//	                                 --workers, --trace, --json, --no-fuse, --plugin
//	dynop graph [--dot] PIPELINE.yaml
//	                                 print the pipeline's graph after passes
//	dynop manifest PLUGIN...         write PLUGIN.dynop.json, read in a child process
//	dynop keygen [--out PREFIX]      write an ed25519 key pair, PREFIX.key and PREFIX.pub
//	dynop sign --key FILE PLUGIN...  write PLUGIN.dynop.sig (and the manifest if missing)
//	dynop verify [--trust DIR] [--key FILE] PLUGIN...
//	                                 check signatures against a trust store
//	dynop help                       print this help
//
// The host knows the Go plugins compiled into the program (cmd/dynop has
// the example plugins under plugins/) and the plugin files it finds: the PATH
// arguments (files or directories; --plugin for run and graph), then
// $DYNOP_PLUGIN_PATH, the directory plugins next to this executable and
// $XDG_DATA_HOME/dynop/plugins (see package discover). Finding a plugin
// runs none of its code in the CLI: its info comes from its manifest, the
// registry cache or a scanner child process (this executable, started
// again). $DYNOP_TRUST_DIR names a directory of trusted public keys, which
// makes the signature policy require unless $DYNOP_SIGNATURE_POLICY says
// warn or off.
//
// list and inspect exit with status 1 if a plugin file is broken, after
// printing what they could; run and graph only if a file given with
// --plugin is.
//
// # JSON output of list
//
// `dynop list --json` prints one object, stable within a schema version:
//
//	{
//	  "schema": "dynop.list/v2",
//	  "plugins": [
//	    {
//	      "id": "dynop.plugin.greeter",          // vendor.plugin.name[.backend]; omitted for a file broken before its ID was known
//	      "version": "1.0.0",                     // plugin version
//	      "api_version": "0.1.0",                 // plugin API it was built for
//	      "description": "…", "author": "…", "build": "…",   // omitted when empty
//	      "interfaces": [{"uid": "C6A1D7F2-…", "name": "dynop.example.Greeter", "version": "1.0.0"}],
//	      "needs": [{"plugin": "dynop.plugin.text", "interface": {"uid": "…", "name": "…", "version": "1.1.0"}}],
//	      "requirements": {"os": […], "arch": […], "cpu_features": […], "gpu": {…}},  // empty fields omitted
//	      "path": "/…/libdynop_stats.so",        // the plugin file; omitted for compiled-in plugins
//	      "state": "available",                   // available, starting, started, stopping,
//	                                              // broken, unsupported, untrusted or duplicate
//	      "error": "…",                           // why it is not usable; omitted otherwise
//	      "duplicate_of": "/…",                   // for a duplicate: the file used instead ("compiled in")
//	      "signer": "3f2a…"                       // the key id whose signature verified
//	    }
//	  ]
//	}
//
// Plugins with operators list their schemas under "operators" (the form of
// op.Schema), and the host adds dynop.Operators to their interfaces.
//
// `dynop inspect --json` prints {"schema": "dynop.inspect/v1", "plugin": {…}}
// with one plugin object as above.
//
// # JSON output of operators
//
// `dynop list --ops --json` prints {"schema": "dynop.ops/v1", "operators":
// [ENTRY…]} and `dynop inspect --json OPERATOR` prints {"schema":
// "dynop.operator/v1", "operator": ENTRY}, where ENTRY is
//
//	{
//	  "schema": {
//	    "name": "image.Resize", "doc": "…",
//	    "inputs": [{"name": "images", "doc": "…", "dtypes": ["uint8"], "layouts": ["HWC"], "ndim": 3}],
//	    "optional_inputs": 0,                  // the last N inputs may be left out
//	    "outputs": [{"name": "resized", "doc": "…"}],
//	    "args": [{"name": "width", "doc": "…", "type": "int",   // int float bool string dtype, or []T
//	              "required": true, "default": …, "min": 1, "max": 65536,
//	              "allowed": […], "deprecated": ["old_name"]}],  // empty fields omitted
//	    "devices": ["cpu"]
//	  },
//	  "plugin": "dynop.plugin.image"          // omitted for operators registered directly
//	}
package cli
