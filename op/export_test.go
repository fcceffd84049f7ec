package op

import "github.com/dynop/dynop/dispatch"

// CPU returns the CPU the registry chooses variants for, for the
// package's external tests.
func (r *Registry) CPU() dispatch.CPU { return r.cpu }
