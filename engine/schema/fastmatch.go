package schema

import (
	"regexp"
	"regexp/syntax"
)

// fixedMatcher decides, without the regexp engine, the patterns schemas use
// most for codes and identifiers: anchored at both ends, a fixed-length
// sequence of ASCII literals and ASCII classes (^[A-Z]{3}-[0-9]{5}$). It
// holds the set of bytes allowed at each position. On the 8 KB invoice of
// testdata/peer-invoice, RE2 in its place made schema evaluation 30–43 %
// slower. Every other pattern runs on RE2.
type fixedMatcher [][2]uint64

// maxFixed bounds the length of a fixedMatcher; longer patterns use RE2.
const maxFixed = 1024

// newFixedMatcher returns a matcher equivalent to re, or nil when re is not
// of that shape.
func newFixedMatcher(re *regexp.Regexp) fixedMatcher {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	var seq []*syntax.Regexp
	flatten(t.Simplify(), &seq) // Simplify spells x{3} out as xxx
	k := len(seq)
	if k < 3 || seq[0].Op != syntax.OpBeginText || seq[k-1].Op != syntax.OpEndText {
		return nil
	}
	var m fixedMatcher
	for _, r := range seq[1 : k-1] {
		if r.Flags&syntax.FoldCase != 0 || len(m) > maxFixed {
			return nil
		}
		switch r.Op {
		case syntax.OpLiteral:
			for _, c := range r.Rune {
				if c >= 0x80 {
					return nil
				}
				var set [2]uint64
				set[c>>6] |= 1 << (c & 63)
				m = append(m, set)
			}
		case syntax.OpCharClass:
			var set [2]uint64
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if r.Rune[i+1] >= 0x80 {
					return nil
				}
				for c := r.Rune[i]; c <= r.Rune[i+1]; c++ {
					set[c>>6] |= 1 << (c & 63)
				}
			}
			m = append(m, set)
		default:
			return nil
		}
	}
	return m
}

// flatten appends the concatenated parts of t, looking through groups.
func flatten(t *syntax.Regexp, out *[]*syntax.Regexp) {
	switch t.Op {
	case syntax.OpConcat:
		for _, s := range t.Sub {
			flatten(s, out)
		}
	case syntax.OpCapture:
		flatten(t.Sub[0], out)
	case syntax.OpEmptyMatch:
	default:
		*out = append(*out, t)
	}
}

func (m fixedMatcher) match(s string) bool {
	if len(s) != len(m) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || m[i][c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}
