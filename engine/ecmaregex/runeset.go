package ecmaregex

import (
	"slices"
	"unicode"
)

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// runeSet is a sorted list of disjoint, non-adjacent ranges. The helpers
// below always return a normalized set and never modify their arguments.
type runeSet []runeRange

// setOf builds a set from ranges in any order: it sorts a copy of rs and
// merges overlapping or adjacent ranges.
func setOf(rs ...runeRange) runeSet {
	if len(rs) == 0 {
		return nil
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b runeRange) int { return int(a.lo - b.lo) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.lo <= last.hi+1 {
			last.hi = max(last.hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// tableSet returns the union of Unicode range tables, expanding strided
// ranges.
func tableSet(ts ...*unicode.RangeTable) runeSet {
	var rs []runeRange
	for _, t := range ts {
		for _, r := range t.R16 {
			rs = appendStrided(rs, rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		for _, r := range t.R32 {
			rs = appendStrided(rs, rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
	}
	return setOf(rs...)
}

func appendStrided(rs []runeRange, lo, hi, stride rune) []runeRange {
	if stride == 1 {
		return append(rs, runeRange{lo, hi})
	}
	for c := lo; c <= hi; c += stride {
		rs = append(rs, runeRange{c, c})
	}
	return rs
}

// complement returns every code point not in s.
func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, runeRange{next, unicode.MaxRune})
	}
	return out
}

// minus returns the code points of s that are not in t.
func (s runeSet) minus(t runeSet) runeSet {
	return setOf(append(s.complement(), t...)...).complement()
}
