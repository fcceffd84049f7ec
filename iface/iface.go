// Package iface defines how dynop names and versions the interfaces that
// plugins provide: a 128-bit [UID] for the type, a semantic [Version], and a
// [Desc] that puts them together with a human-readable name.
//
// Interfaces follow NVIGI's rules for typed, versioned C-style structs: once
// shipped, an interface only grows at the end, and each growth bumps its
// minor version. A caller asks for the minimum version it was written
// against; [Compatible] decides whether a provider can serve it.
//
// For Go code, [Def] ties a descriptor to the Go type that implements it, so
// that acquiring an interface returns a typed value:
//
//	var Interface = iface.Define[Text]("3F0B6D52-8A8C-4E55-9C5E-2B1B0D6C7A11", "dynop.example.Text", iface.V(1, 0, 0))
package iface

import (
	"errors"
	"fmt"
	"reflect"
)

// Sentinel errors; test for them with [errors.Is].
var (
	// ErrSyntax reports malformed UID or version text.
	ErrSyntax = errors.New("syntax error")
	// ErrVersion reports a version that does not satisfy what was asked for.
	ErrVersion = errors.New("incompatible version")
	// ErrType reports an interface whose implementation is not of the Go
	// type the caller expects.
	ErrType = errors.New("wrong interface type")
)

// Desc describes one interface: its type UID, its name and its version.
// When a plugin provides an interface, Version is the version it
// implements; when a caller requests one, Version is the minimum it needs.
type Desc struct {
	UID     UID     `json:"uid"`
	Name    string  `json:"name"`
	Version Version `json:"version"`
}

// String returns "name vX.Y.Z {UID}".
func (d Desc) String() string {
	return fmt.Sprintf("%s v%s {%s}", d.Name, d.Version, d.UID)
}

// Validate reports whether d can name an interface: it needs a non-zero UID
// and a name.
func (d Desc) Validate() error {
	switch {
	case d.UID.IsZero():
		return fmt.Errorf("interface %q: UID is zero", d.Name)
	case d.Name == "":
		return fmt.Errorf("interface {%s}: name is empty", d.UID)
	}
	return nil
}

// Def is an interface descriptor bound to the Go type T through which the
// interface is used. T is usually a Go interface type, or a pointer to a
// struct of function fields for C-style interfaces.
//
// A Def is declared once, next to T, and shared by the plugin that provides
// the interface and the code that acquires it.
type Def[T any] struct {
	Desc
}

// Define returns the Def of interface T with the given UID text, name and
// version. It panics if uid is malformed or name is empty, because a Def is
// meant to be a package-level variable whose values are fixed in source.
func Define[T any](uid, name string, v Version) Def[T] {
	d := Desc{UID: MustParseUID(uid), Name: name, Version: v}
	if err := d.Validate(); err != nil {
		panic("iface.Define: " + err.Error())
	}
	return Def[T]{d}
}

// Cast returns impl as a T, or an error wrapping [ErrType] that names the
// interface, the type expected and the type found.
func (d Def[T]) Cast(impl any) (T, error) {
	t, ok := impl.(T)
	if !ok {
		return t, fmt.Errorf("%w: interface %s: want an implementation of %s, got %T",
			ErrType, d.Desc, reflect.TypeFor[T](), impl)
	}
	return t, nil
}

// Adder is what [Def.Provide] adds an interface to; plugin.Registrar is one.
type Adder interface {
	AddInterface(desc Desc, impl any) error
}

// Provide adds impl as the implementation of d to h, typically a plugin's
// host during Start. The compiler checks that impl is a T.
func (d Def[T]) Provide(h Adder, impl T) error {
	return h.AddInterface(d.Desc, impl)
}
