//go:build !race

package engine

// raceSlowdown scales the time bounds of the tests that time a deadline; 1
// without the race detector.
const raceSlowdown = 1

// raceEnabled reports a build with the race detector, whose shadow memory
// distorts heap figures.
const raceEnabled = false
