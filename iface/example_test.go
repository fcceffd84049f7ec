package iface_test

import (
	"errors"
	"fmt"

	"github.com/dynop/dynop/iface"
)

// Greeter is the Go type through which the example interface is used.
type Greeter interface {
	Greet(name string) string
}

// GreeterInterface is the Greeter interface's descriptor, declared once
// next to the type and shared by the plugin that provides it and the
// code that acquires it.
var GreeterInterface = iface.Define[Greeter]("AD9DC29C-0A89-4A4E-B900-A7183B48336E", "example.Greeter", iface.V(1, 2, 0))

// english is a plugin's implementation of Greeter.
type english struct{}

func (english) Greet(name string) string { return "Hello, " + name }

// host stands in for plugin.Registrar: it keeps what plugins provide by UID.
type host map[iface.UID]any

func (h host) AddInterface(desc iface.Desc, impl any) error {
	if err := desc.Validate(); err != nil {
		return err
	}
	h[desc.UID] = impl
	return nil
}

// A plugin provides an interface through its Def, and a caller gets it
// back as the Go type it was declared with.
func Example() {
	h := host{}
	// In a plugin's Start: the compiler checks that english is a Greeter.
	if err := GreeterInterface.Provide(h, english{}); err != nil {
		fmt.Println(err)
		return
	}

	// In the code that acquires it: a caller written against 1.1 can use 1.2.
	if err := iface.CheckVersion("interface "+GreeterInterface.Name, GreeterInterface.Version, iface.V(1, 1, 0)); err != nil {
		fmt.Println(err)
		return
	}
	g, err := GreeterInterface.Cast(h[GreeterInterface.UID])
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(GreeterInterface.Desc)
	fmt.Println(g.Greet("dynop"))
	// Output:
	// example.Greeter v1.2.0 {AD9DC29C-0A89-4A4E-B900-A7183B48336E}
	// Hello, dynop
}

// Cast refuses an implementation of the wrong Go type with an error
// that wraps ErrType.
func ExampleDef_Cast() {
	_, err := GreeterInterface.Cast("not a greeter")
	fmt.Println(errors.Is(err, iface.ErrType))
	fmt.Println(err)
	// Output:
	// true
	// wrong interface type: interface example.Greeter v1.2.0 {AD9DC29C-0A89-4A4E-B900-A7183B48336E}: want an implementation of iface_test.Greeter, got string
}

// A provider serves a caller if the major versions match and it has at
// least the minor version asked for; while the major version is 0,
// the minor versions must match exactly. Patch numbers never matter.
func ExampleCompatible() {
	for _, c := range []struct{ provided, requested iface.Version }{
		{iface.V(1, 2, 0), iface.V(1, 0, 0)},
		{iface.V(1, 2, 0), iface.V(1, 2, 9)},
		{iface.V(1, 2, 0), iface.V(1, 3, 0)},
		{iface.V(2, 0, 0), iface.V(1, 0, 0)},
		{iface.V(0, 3, 0), iface.V(0, 2, 0)},
	} {
		fmt.Printf("provides %v, asked for %v: %v\n", c.provided, c.requested, iface.Compatible(c.provided, c.requested))
	}
	// Output:
	// provides 1.2.0, asked for 1.0.0: true
	// provides 1.2.0, asked for 1.2.9: true
	// provides 1.2.0, asked for 1.3.0: false
	// provides 2.0.0, asked for 1.0.0: false
	// provides 0.3.0, asked for 0.2.0: false
}

// CheckVersion explains why a version does not do.
func ExampleCheckVersion() {
	err := iface.CheckVersion(`interface "example.Greeter"`, iface.V(1, 2, 0), iface.V(1, 3, 0))
	fmt.Println(errors.Is(err, iface.ErrVersion))
	fmt.Println(err)
	// Output:
	// true
	// incompatible version: interface "example.Greeter": requested 1.3.0 or newer, provided 1.2.0: provided minor 2 is older than requested minor 3
}

// A UID reads the GUID text form in either case, with or without
// braces (from JSON, a flag.TextVar or UnmarshalText), and prints it in
// upper case without them.
func ExampleUID_UnmarshalText() {
	var u iface.UID
	err := u.UnmarshalText([]byte("{ad9dc29c-0a89-4a4e-b900-a7183b48336e}"))
	fmt.Println(u, err)

	err = u.UnmarshalText([]byte("AD9DC29C-0A89-4A4E-B900"))
	fmt.Println(errors.Is(err, iface.ErrSyntax))
	// Output:
	// AD9DC29C-0A89-4A4E-B900-A7183B48336E <nil>
	// true
}

// A Version reads "major.minor.patch", with an optional "v".
func ExampleVersion_UnmarshalText() {
	for _, s := range []string{"v1.4.2", "1.4", "1.04.2"} {
		var v iface.Version
		if err := v.UnmarshalText([]byte(s)); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q: major %d, minor %d, patch %d\n", s, v.Major, v.Minor, v.Patch)
	}
	// Output:
	// "v1.4.2": major 1, minor 4, patch 2
	// syntax error: version "1.4": want major.minor.patch, got 2 part(s)
	// syntax error: version "1.04.2": minor part "04" is not a decimal number without leading zeros
}
