//go:build !race

package schema

// raceEnabled reports a -race build, where sync.Pool drops items at random
// and allocation counts rise.
const raceEnabled = false
