//go:build !race

package chaos

// raceEnabled is true when the test binary runs under the race detector; the
// relay processes are then built with -race too.
const raceEnabled = false
