//go:build race

package main

// raceSlowdown scales the latency bounds of the abuse tests: the race
// detector makes the server's CPU-bound work five to ten times slower.
const raceSlowdown = 5
