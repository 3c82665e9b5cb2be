//go:build !race

package tools

// raceSlowdown scales the time bounds of the hostile-input tests; 1 without
// the race detector.
const raceSlowdown = 1
