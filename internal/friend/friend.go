// Package friend lets a public package of this module hand a function to
// the module's other packages without exporting it to users: the
// public package registers the function from its init with [Set], and a
// sibling fetches it by its type with [Get]. gRPC's internal package
// carries unexported hooks between its public packages the same way.
//
// What goes through here: how a host makes a [plugin.Ref] (package
// plugin), and how it declares operators and passes that a plugin
// provides on demand (packages op and graph).
//
// Set runs only from init functions, which finish before any other code
// can call Get, so the table needs no lock.
package friend

import (
	"fmt"
	"reflect"
)

var funcs = map[reflect.Type]any{}

// Set registers f, a function, under its type. It panics if that type is
// taken: each hook has one owner.
func Set[F any](f F) {
	t := reflect.TypeFor[F]()
	if _, dup := funcs[t]; dup {
		panic(fmt.Sprintf("friend: a second function of type %v", t))
	}
	funcs[t] = f
}

// Get returns the function of type F that a package registered with Set.
// It panics if there is none: that package is not linked in, a bug in
// this module.
func Get[F any]() F {
	f, ok := funcs[reflect.TypeFor[F]()]
	if !ok {
		panic(fmt.Sprintf("friend: no function of type %v is registered", reflect.TypeFor[F]()))
	}
	return f.(F)
}
