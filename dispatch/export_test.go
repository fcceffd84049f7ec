package dispatch

// Methods of the package that its external tests use.

func (s Features) Dependents() Features { return s.dependents() }

func (s Features) Unknown() Features { return s.unknown() }
