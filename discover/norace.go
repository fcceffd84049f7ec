//go:build !race

package discover

const raceEnabled = false
