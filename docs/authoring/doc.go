// Package authoring holds the examples of the plugin authors' guide,
// docs/authoring.md, and the test that keeps the guide honest: it builds
// every example, runs it through a real host, checks that it behaves as
// the guide says, and checks that every code block of the guide under an
// <!-- example: PATH --> marker is in PATH verbatim.
//
// The examples are C plugins (lifecycle/, abi/, versioning/, variants/),
// a Go plugin compiled in (goplugin/), a Go WebAssembly plugin (gowasm/)
// and a release tool's signing step (signing/).
package authoring
