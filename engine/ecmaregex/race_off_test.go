//go:build !race

package ecmaregex

const raceEnabled = false
