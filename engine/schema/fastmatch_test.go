package schema

import (
	"testing"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
)

var fixedPatterns = []struct {
	src   string
	fixed bool // expected to take fixedMatcher
}{
	{`^[A-Z]{3}-[0-9]{5}$`, true},
	{`^INV-[0-9]{4}-[0-9]{6}$`, true},
	{`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, true},
	{`^[A-Z]{2}$`, true},
	{`^(ab)[c.-]$`, true},
	{`^\d\d$`, true},
	{`^[0-9a-f]{64}$`, true},
	{`^a$`, true},
	{`^$`, false},
	{`^[A-Z]{2}[0-9A-Z]{2,12}$`, false}, // variable length
	{`^\d+$`, false},
	{`^a*`, false},
	{`^ab`, false}, // not anchored at the end
	{`ab$`, false}, // not anchored at the start
	{`^é{2}$`, false},
	{`^[^a]$`, false}, // the class reaches beyond ASCII
	{`^.$`, false},
	{`^x|y$`, false},
	{`^a{1000}b{100}$`, false}, // longer than maxFixed
}

func matchers(t testing.TB) []*pattern {
	var out []*pattern
	for _, p := range fixedPatterns {
		re, err := ecmaregex.Compile(p.src)
		if err != nil {
			t.Fatalf("compiling %q: %v", p.src, err)
		}
		m := newFixedMatcher(re)
		if (m != nil) != p.fixed {
			t.Errorf("newFixedMatcher(%q) fixed = %v, want %v", p.src, m != nil, p.fixed)
		}
		out = append(out, &pattern{src: p.src, re: re, fixed: m})
	}
	return out
}

// TestFixedMatcher compares fixedMatcher with RE2 on every string of up to
// four characters over an alphabet that exercises the patterns.
func TestFixedMatcher(t *testing.T) {
	alphabet := []string{"a", "b", "c", "x", "A", "Z", "0", "9", "-", ".", "é", "\n", "\xff"}
	var strs []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		strs = append(strs, prefix)
		if n == 0 {
			return
		}
		for _, a := range alphabet {
			gen(prefix+a, n-1)
		}
	}
	gen("", 4)
	strs = append(strs, "ABC-12345", "ABC-1234", "ABC-123456", "INV-2025-000123", "2025-11-30", "DE123456789")
	for _, p := range matchers(t) {
		if p.fixed == nil {
			continue
		}
		for _, s := range strs {
			if got, want := p.fixed.match(s), p.re.MatchString(s); got != want {
				t.Errorf("fixed %q on %q = %v, RE2 says %v", p.src, s, got, want)
			}
		}
	}
}

func FuzzFixedMatcher(f *testing.F) {
	for _, s := range []string{"ABC-12345", "DE123", "2025-11-30", "é", ""} {
		f.Add(s)
	}
	ps := matchers(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range ps {
			if p.fixed != nil && p.fixed.match(s) != p.re.MatchString(s) {
				t.Errorf("fixed %q on %q = %v, RE2 disagrees", p.src, s, p.fixed.match(s))
			}
		}
	})
}
