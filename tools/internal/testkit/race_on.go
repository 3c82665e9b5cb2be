//go:build race

package testkit

// RaceSlowdown scales the time bounds of the hostile-input tests: the race
// detector makes this CPU-bound code (decoding, regular expressions,
// canonicalization) five to ten times slower.
const RaceSlowdown = 5
