package engine

import (
	"strings"
	"testing"
)

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"日本語", 3, "日本語"},
		{"日本語の", 3, "日本…"},
		{"a😀b😀c", 4, "a😀b…"},
		{strings.Repeat("é", 1<<20), 5, "éééé…"},
	} {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%.20q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	long := strings.Repeat("x", 4<<20)
	if allocs := testing.AllocsPerRun(10, func() { _ = truncate(long, 80) }); allocs > 1 {
		t.Errorf("truncate of a 4 MiB string allocates %v times, want at most 1 (the cut copy)", allocs)
	}
}
