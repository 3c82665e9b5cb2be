//go:build !race

package ecmaregex

import "time"

const raceEnabled = false

// hostileBound is how long one hostile evaluation may take in a test.
func hostileBound() time.Duration { return 2 * time.Second }
