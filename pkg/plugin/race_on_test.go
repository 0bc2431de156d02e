//go:build race

package plugin

// raceEnabled reports whether the test binary runs with the race detector.
const raceEnabled = true
