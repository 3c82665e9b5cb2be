//go:build !race

package main

// raceSlowdown scales the latency bounds of the abuse tests; 1 without the
// race detector.
const raceSlowdown = 1
