package schema

import (
	"testing"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
)

var fastPatterns = []struct {
	src  string
	fast bool // expected to take the fast path
}{
	{`^[A-Z]{3}-[0-9]{5}$`, true},
	{`^INV-[0-9]{4}-[0-9]{6}$`, true},
	{`^[A-Z]{2}[0-9A-Z]{2,12}$`, true},
	{`^[A-Z]{2}$`, true},
	{`^\d+$`, true},
	{`^[a-z]+\.com$`, true},
	{`^a*`, true},
	{`^ab?c`, true},
	{`^é+ü{2}$`, true},
	{`^[^a]*a$`, true},
	{`^(abc)+$`, false},
	{`^[a-z]+[a-c]$`, false}, // greedy would overrun
	{`^a*a$`, false},
	{`^a?b?$`, false}, // conservative: optional followed by optional
	{`^a?a$`, false},
	{`a+`, false}, // unanchored
	{`^.{2,3}$`, true},
	{`^x|y$`, false},
}

func matchers(t testing.TB) []*pattern {
	var out []*pattern
	for _, p := range fastPatterns {
		re, err := ecmaregex.Compile(p.src)
		if err != nil {
			t.Fatalf("compiling %q: %v", p.src, err)
		}
		fm := newFastMatcher(re)
		if (fm != nil) != p.fast {
			t.Errorf("newFastMatcher(%q) fast = %v, want %v", p.src, fm != nil, p.fast)
		}
		out = append(out, &pattern{src: p.src, re: re, fast: fm})
	}
	return out
}

// TestFastMatcher compares the fast path with RE2 on every string of up to
// four characters over an alphabet that exercises the patterns.
func TestFastMatcher(t *testing.T) {
	alphabet := []string{"a", "b", "c", "x", "A", "Z", "0", "9", "-", ".", "é", "ü", "\n", "\xff"}
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
	strs = append(strs, "ABC-12345", "INV-2025-000123", "DE123456789", "GB", "abc.com", "ééüü")
	for _, p := range matchers(t) {
		if p.fast == nil {
			continue
		}
		for _, s := range strs {
			if got, want := p.fast.match(s), p.re.MatchString(s); got != want {
				t.Errorf("fast %q on %q = %v, RE2 says %v", p.src, s, got, want)
			}
		}
	}
}

func FuzzFastMatcher(f *testing.F) {
	for _, s := range []string{"ABC-12345", "DE123", "abc.com", "é", ""} {
		f.Add(s)
	}
	ps := matchers(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range ps {
			if p.fast != nil && p.fast.match(s) != p.re.MatchString(s) {
				t.Errorf("fast %q on %q = %v, RE2 disagrees", p.src, s, p.fast.match(s))
			}
		}
	})
}
