// Package cli is the dynop command line: it inspects the plugins a dynop
// host finds, runs pipelines of their operators, writes and checks plugin
// manifests and signatures, and scaffolds new plugins. Command dynop
// (cmd/dynop) is [Main] with dynop's own Go plugins (image, npy) and no
// example; a program that compiles in its own Go plugins builds its own
// dynop the same way:
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
// [Main] serves as the scanner child process first when the program is
// started as one (see [dynop.ServeScanner]), so such a main needs nothing
// else; it must not print, parse flags or open a host before calling Main.
//
// The package registers the native and WebAssembly loaders, NVIDIA GPU
// detection and the image plugin (image.Decode and image.Encode, which
// pipelines need).
//
// Usage:
//
//	dynop version [--json]           print the dynop build (module version, VCS revision,
//	                                 commit time, modified flag), the plugin API version
//	                                 and the Go toolchain
//	dynop list [flags] [PATH...]     list every plugin found with its state and why,
//	                                 with --ops the operators they provide, with
//	                                 --interfaces the interfaces
//	dynop inspect [flags] PATH|ID|OPERATOR|INTERFACE [PATH...]
//	                                 show one plugin (a plugin file, or a plugin's ID),
//	                                 one operator's schema and CPU variants, or one
//	                                 interface's providers and consumers
//	dynop doctor [--color WHEN] [--json]
//	                                 check the environment and say what to fix
//	dynop bench [flags] OPERATOR [PATH...]
//	                                 time each variant of an operator this CPU runs
//	dynop run [flags] PIPELINE.yaml  run a pipeline file (see package pipeline)
//	                                 and write its outputs
//	dynop graph [flags] PIPELINE.yaml
//	                                 print the pipeline's graph after passes
//	dynop manifest PLUGIN...         write PLUGIN.dynop.json, read in a child process
//	dynop keygen [--out PREFIX]      write an ed25519 key pair, PREFIX.key and PREFIX.pub
//	dynop sign --key FILE PLUGIN...  write PLUGIN.dynop.sig (and the manifest if missing)
//	dynop verify [--trust DIR] [--key FILE]... PLUGIN...
//	                                 check signatures against a trust store
//	dynop new --lang LANG [flags] NAME
//	                                 write a plugin project (LANG c, cpp, go, go-wasm
//	                                 or rust): sources, build file, test, pipeline, README
//	dynop include-dir                print the directory holding dynop/dynop.h
//	                                 (CGO_CFLAGS=-I$(dynop include-dir))
//	dynop completion bash|zsh|fish   print a shell completion script
//	dynop help [COMMAND]             print the commands, or one command's help
//
// # Help and usage errors
//
// dynop help, dynop --help and dynop -h print the commands, each with
// every flag it takes, on stdout. dynop help COMMAND, dynop COMMAND
// --help and dynop COMMAND -h print that command's usage, what it does,
// its flags (double-dashed, with placeholders: --workers N, --in
// [NAME=]PATH, --sandbox[=POLICY]) and an example, on stdout, exit
// status 0. The help reads each command's flags from its own flag set,
// so every command must parse its flags before it does anything else
// (commandFlags runs it with --help). Flags may be written with one dash
// or two and may come before or after the arguments.
//
// A usage error — a missing argument, an unknown flag, a bad flag value —
// prints "dynop: " and what is wrong, then that command's short usage,
// on stderr, exit status 2; an unknown command or flag gets the nearest
// known one ("unknown command "lsit" (did you mean "list"?)", "flag
// provided but not defined: --worker (did you mean --workers?)"). dynop
// with no arguments prints the commands on stderr, exit status 2.
//
// # Completion
//
// dynop completion bash|zsh|fish prints a script that completes
// commands, flags, the values of flags that take one of a list (--color,
// --sandbox, --lang), operator names (inspect, bench), plugin IDs
// (inspect) and files. The scripts ask the dynop being completed for the
// candidates through the hidden command dynop __complete, which prints
// one a line and nothing on stderr (a broken plugin file says nothing
// while a shell completes).
//
// # Version and headers
//
// dynop version reports the dynop module's version and the VCS revision,
// commit time and modified flag from the build information, "unknown"
// where the build recorded none (go run, go test, -buildvcs=false); with
// --json, the schema dynop.version/v1. dynop include-dir prints the
// directory holding dynop/dynop.h, for a Go binding of a C interface
// outside this module (CGO_CFLAGS=-I$(dynop include-dir)): the include
// directory of an install ($PREFIX/include beside $PREFIX/bin/dynop, the
// executable's symbolic links resolved), else abi/include in a dynop
// source tree ($DYNOP_ROOT, a checkout above the executable, or the tree
// it was built in); it exits 1 naming every place it looked otherwise.
//
// The host knows the Go plugins compiled into the program (cmd/dynop has
// dynop's own, image and npy) and the plugin files it finds: the PATH
// arguments (files or directories; --plugin for run and graph), then
// $DYNOP_PLUGIN_PATH, the directory plugins next to this executable,
// PREFIX/lib/dynop/plugins for one installed as PREFIX/bin/dynop, and
// $XDG_DATA_HOME/dynop/plugins (see package discover). Finding a plugin
// runs none of its code in the CLI: its info comes from its manifest, the
// registry cache or a scanner child process (this executable, started
// again, in which [Main] serves as the scanner). $DYNOP_TRUST_DIR names a directory of trusted public keys, which
// makes the signature policy require unless $DYNOP_SIGNATURE_POLICY says
// warn or off. $DYNOP_SANDBOX chooses between native and WebAssembly
// builds (as --sandbox does), and $DYNOP_SANDBOX_GRANT lists what
// WebAssembly plugins may have beyond computing (clock, random, env,
// stdio).
//
// # Exit status
//
// 0 on success, 1 on failure, 2 on a usage error. list and inspect exit
// with status 1 if a plugin file is broken, after printing what they
// could; run and graph only if a file given with --plugin is; doctor if
// one of its checks fails. A plugin file that is not a regular file (a
// named pipe, a device, a socket) is broken, and never opened.
//
// Stopping the plugins a command started runs their deregister, which
// may fail; the plugin is unloaded regardless. run, graph, bench and
// inspect print each such failure on stderr as a warning line, "dynop:
// warning: … stop plugin "ID": deregister: …" with what the plugin said,
// and it does not change the exit status: a run whose outputs were all
// written exits 0 though a plugin failed to deregister, for no data was
// lost.
//
// # Signals
//
// The first SIGINT (Ctrl-C) or SIGTERM stops the command gracefully: its
// context is cancelled (a pipeline stops between batches and writes no
// output, a scanner child is killed), and dynop says on stderr that it is
// stopping and that another Ctrl-C exits at once. The second ends the
// process at once, as Go's tools and Docker do, for plugin code that
// blocks (a register that never returns) cannot be cancelled: the status
// is 128 + the signal's number, 130 for SIGINT and 143 for SIGTERM. A
// command the first signal stopped that fails exits with that status
// too. [Main] does this; [Run] leaves signals to its caller.
//
// # Plugin text
//
// Everything a plugin supplies — its description, author, build, IDs,
// interface, operator and argument names and docs, the errors it sets, the
// lines it logs — may hold bytes a terminal acts on. The CLI prints it
// with C0 and C1 control characters, DEL, bidirectional formatting
// characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) and
// bytes that are not UTF-8 spelled out in Go's notation (\x1b, \r,
// \u009b, \u202e, \x9b), coloured or not; a newline or tab in a table cell
// is spelled out too (\n, \t). --json output escapes the same characters
// as JSON \u escapes, so the strings decode to what the plugin said.
//
// # Colour
//
// list, inspect and doctor print aligned columns, and colour the plugin
// states (available green; starting, started and stopping cyan; unsupported
// yellow; broken and untrusted red; duplicate dim), the check statuses and
// the headers only when --color=auto (the default) finds standard output
// is a terminal, $NO_COLOR is unset or empty (https://no-color.org) and
// $TERM is not "dumb"; --color=always and --color=never decide regardless.
// Columns are measured on the plain text, so colour never misaligns them.
//
// # Doctor
//
// dynop doctor checks the environment a host opens in, one line per check
// with its status (ok, warn or fail), details below, and for every check
// that is not ok a "fix:" line saying what to do: each search path entry
// and its plugin files, whether a host opens, the registry and
// WebAssembly caches, the trust store, the signature policy, the CPU
// features ($DYNOP_CPU_FEATURES, $DYNOP_VERIFY_VARIANTS), the GPUs and the
// sandbox policy. New checks go into doctorChecks.
//
// # JSON output
//
// With --json, list, inspect, run, doctor and version print one JSON
// object whose "schema" field names its schema: dynop.list/v2 (list),
// dynop.inspect/v1 (inspect of a plugin), dynop.ops/v2 (list --ops),
// dynop.operator/v2 (inspect of an operator), dynop.interfaces/v1 (list
// --interfaces), dynop.interface/v1 (inspect of an interface),
// dynop.run/v2 (run), dynop.doctor/v1 (doctor) and dynop.version/v1
// (version); no other field is called "schema". docs/cli-json.md in the
// repository documents every field of each. Within a schema version
// fields are only added; removing a field or changing its type or
// meaning makes a new version. Readers should check "schema" and ignore
// fields they do not know. A test decodes the real output of each
// command and fails on a field docs/cli-json.md does not list.
package cli
