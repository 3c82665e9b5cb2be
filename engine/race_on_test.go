//go:build race

package engine

// raceSlowdown scales the time bounds of the tests that time a deadline:
// the race detector makes this CPU-bound code five to ten times slower.
const raceSlowdown = 5

// raceEnabled reports a build with the race detector, whose shadow memory
// distorts heap figures.
const raceEnabled = true
