package pipeline

// NewTestRegistry returns the registry of test operators, for the
// package's examples.
var NewTestRegistry = testRegistry
