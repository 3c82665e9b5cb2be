//go:build !race

package testkit

// RaceSlowdown scales the time bounds of the hostile-input tests; 1 without
// the race detector.
const RaceSlowdown = 1
