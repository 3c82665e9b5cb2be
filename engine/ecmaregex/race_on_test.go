//go:build race

package ecmaregex

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts include fresh evaluators.
const raceEnabled = true
