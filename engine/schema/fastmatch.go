package schema

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// fastMatcher decides, without the regexp engine, patterns of the shape
// schemas use most: anchored at the start, a sequence of literals and
// single-character classes with repeat counts, optionally anchored at the
// end (^[A-Z]{3}-[0-9]{5}$). It only accepts sequences where a greedy scan
// is exact: every variable repeat is followed by the end or by a mandatory
// element whose first character it cannot match. Anything else keeps using
// the compiled RE2 program.
type fastMatcher struct {
	elems []fmElem
	end   bool // anchored at the end of the text
	// fixed, when set, is the byte set of every position of a pattern of
	// fixed length over ASCII (^[A-Z]{3}-[0-9]{5}$): one test per byte.
	fixed [][4]uint64
}

type fmElem struct {
	lit      string // literal text, or "" for a character set
	set      charSet
	min, max int // max < 0: unbounded
}

// charSet is a set of code points: a bitmap for ASCII and ranges beyond.
type charSet struct {
	ascii  [2]uint64
	ranges []rune // pairs lo, hi of code points >= 0x80
}

func (c *charSet) has(r rune) bool {
	if r < 0x80 {
		return c.ascii[r>>6]&(1<<(uint(r)&63)) != 0
	}
	for i := 0; i+1 < len(c.ranges); i += 2 {
		if r < c.ranges[i] {
			return false
		}
		if r <= c.ranges[i+1] {
			return true
		}
	}
	return false
}

func newCharSet(ranges []rune) charSet {
	var c charSet
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for r := lo; r <= hi && r < 0x80; r++ {
			c.ascii[r>>6] |= 1 << (uint(r) & 63)
		}
		if hi >= 0x80 {
			c.ranges = append(c.ranges, max(lo, 0x80), hi)
		}
	}
	return c
}

// intersects reports whether the sets share a code point.
func (c *charSet) intersects(o *charSet) bool {
	if c.ascii[0]&o.ascii[0] != 0 || c.ascii[1]&o.ascii[1] != 0 {
		return true
	}
	for i := 0; i+1 < len(c.ranges); i += 2 {
		for j := 0; j+1 < len(o.ranges); j += 2 {
			if c.ranges[i] <= o.ranges[j+1] && o.ranges[j] <= c.ranges[i+1] {
				return true
			}
		}
	}
	return false
}

// newFastMatcher returns a matcher equivalent to re, or nil when re is
// outside the subset.
func newFastMatcher(re *regexp.Regexp) *fastMatcher {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	var seq []*syntax.Regexp
	if !flatten(t, &seq) || len(seq) == 0 || seq[0].Op != syntax.OpBeginText {
		return nil
	}
	seq = seq[1:]
	m := &fastMatcher{}
	if k := len(seq); k > 0 && seq[k-1].Op == syntax.OpEndText {
		m.end = true
		seq = seq[:k-1]
	}
	for _, r := range seq {
		el, ok := element(r)
		if !ok {
			return nil
		}
		m.elems = append(m.elems, el)
	}
	for i, el := range m.elems {
		if el.lit != "" || el.min == el.max {
			continue
		}
		if i+1 == len(m.elems) {
			continue // followed by the end (or nothing, for a prefix match)
		}
		next := m.elems[i+1]
		if next.lit == "" && next.min == 0 {
			return nil
		}
		first := next.set
		if next.lit != "" {
			r, _ := utf8.DecodeRuneInString(next.lit)
			first = newCharSet([]rune{r, r})
		}
		if el.set.intersects(&first) {
			return nil
		}
	}
	m.fixed = fixedPositions(m.elems)
	return m
}

// fixedPositions returns the per-byte sets of a sequence of fixed-count
// ASCII elements, or nil.
func fixedPositions(elems []fmElem) [][4]uint64 {
	var out [][4]uint64
	for _, el := range elems {
		if el.lit != "" {
			for i := 0; i < len(el.lit); i++ {
				c := el.lit[i]
				if c >= utf8.RuneSelf {
					return nil
				}
				var set [4]uint64
				set[c>>6] |= 1 << (c & 63)
				out = append(out, set)
			}
			continue
		}
		if el.min != el.max || len(el.set.ranges) > 0 || el.min > 256 {
			return nil
		}
		for i := 0; i < el.min; i++ {
			out = append(out, [4]uint64{el.set.ascii[0], el.set.ascii[1]})
		}
	}
	return out
}

// flatten appends the concatenated parts of t, looking through groups.
func flatten(t *syntax.Regexp, out *[]*syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpConcat:
		for _, s := range t.Sub {
			if !flatten(s, out) {
				return false
			}
		}
		return true
	case syntax.OpCapture:
		return flatten(t.Sub[0], out)
	case syntax.OpEmptyMatch:
		return true
	}
	*out = append(*out, t)
	return true
}

func element(r *syntax.Regexp) (fmElem, bool) {
	switch r.Op {
	case syntax.OpLiteral:
		if r.Flags&syntax.FoldCase != 0 {
			return fmElem{}, false
		}
		return fmElem{lit: string(r.Rune), min: 1, max: 1}, true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		set, ok := single(r)
		return fmElem{set: set, min: 1, max: 1}, ok
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		set, ok := single(r.Sub[0])
		if !ok {
			return fmElem{}, false
		}
		el := fmElem{set: set}
		switch r.Op {
		case syntax.OpStar:
			el.min, el.max = 0, -1
		case syntax.OpPlus:
			el.min, el.max = 1, -1
		case syntax.OpQuest:
			el.min, el.max = 0, 1
		default:
			el.min, el.max = r.Min, r.Max
		}
		return el, true
	}
	return fmElem{}, false
}

// single returns the set of a one-character expression.
func single(r *syntax.Regexp) (charSet, bool) {
	switch r.Op {
	case syntax.OpLiteral:
		if len(r.Rune) != 1 || r.Flags&syntax.FoldCase != 0 {
			return charSet{}, false
		}
		return newCharSet([]rune{r.Rune[0], r.Rune[0]}), true
	case syntax.OpCharClass:
		return newCharSet(r.Rune), true
	case syntax.OpAnyChar:
		return newCharSet([]rune{0, utf8.MaxRune}), true
	case syntax.OpAnyCharNotNL:
		return newCharSet([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}), true
	case syntax.OpCapture:
		return single(r.Sub[0])
	}
	return charSet{}, false
}

func (m *fastMatcher) match(s string) bool {
	if fx := m.fixed; fx != nil {
		if len(s) < len(fx) || (m.end && len(s) != len(fx)) {
			return false
		}
		s = s[:len(fx)]
		for i := 0; i < len(s); i++ {
			c := s[i] // bytes >= 0x80 are in no set: every position is ASCII
			if fx[i][c>>6]&(1<<(c&63)) == 0 {
				return false
			}
		}
		return true
	}
	i := 0
	for k := range m.elems {
		el := &m.elems[k]
		if el.lit != "" {
			if !strings.HasPrefix(s[i:], el.lit) {
				return false
			}
			i += len(el.lit)
			continue
		}
		n := 0
		for (el.max < 0 || n < el.max) && i < len(s) {
			if c := s[i]; c < utf8.RuneSelf {
				if el.set.ascii[c>>6]&(1<<(c&63)) == 0 {
					break
				}
				i++
			} else {
				r, w := utf8.DecodeRuneInString(s[i:])
				if !el.set.has(r) {
					break
				}
				i += w
			}
			n++
		}
		if n < el.min {
			return false
		}
	}
	return !m.end || i == len(s)
}
