//go:build race

package peer

// raceEnabled tells whether this binary was built with the race detector;
// a standard-library plugin it loads must be too.
const raceEnabled = true
