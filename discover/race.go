//go:build race

package discover

// raceEnabled: this program, and so its scanner children, are built with
// the race detector, whose runtime sleeps a second at exit unless told
// not to (GORACE atexit_sleep_ms).
const raceEnabled = true
