//go:build !race

package jsonnum

import "time"

// speedBound is the time budget of TestParseFloatIsFast; the race detector
// slows the parser several times.
const speedBound = time.Second
