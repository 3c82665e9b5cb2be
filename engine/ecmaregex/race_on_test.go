//go:build race

package ecmaregex

import "time"

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts include fresh evaluators.
const raceEnabled = true

// hostileBound is how long one hostile evaluation may take in a test.
// The race detector slows evaluation several times.
func hostileBound() time.Duration { return 10 * time.Second }
