package schema

import (
	"slices"
)

// held counts k checks that held, when count is set, and returns k.
func (e *evaluator) held(k int, count bool) int {
	if count {
		e.total += k
		e.passed += k
	}
	return k
}

// The bits of numberChecks' mask of failed checks, in the order value
// reports them.
const (
	numFailType uint8 = 1 << iota
	numFailEnum
	numFailConst
	numFailMultipleOf
	numFailMinimum
	numFailMaximum
	numFailExclMin
	numFailExclMax
)

// numChecks names the keyword of each bit of numberChecks' mask: bit i
// stands for numChecks[i].
var numChecks = [...]kwID{kwType, kwEnum, kwConst, kwMultipleOf, kwMinimum, kwMaximum, kwExclusiveMinimum, kwExclusiveMaximum}

// numberChecks runs every check of n on the number num (the instance value
// v): type, enum, const, multipleOf and the bounds, all exact. It returns
// how many held and a mask of those that failed.
func numberChecks(n *node, num *number, v any) (held int, failed uint8) {
	test := func(ok bool, bit uint8) {
		if ok {
			held++
		} else {
			failed |= bit
		}
	}
	if n.types != 0 {
		test(n.types&typeNumber != 0 || n.types&typeInteger != 0 && num.isInt(), numFailType)
	}
	if n.enum != nil {
		test(n.enum.hasNumber(num, v), numFailEnum)
	}
	if n.hasConst {
		test(jsonEqual(n.constVal, v), numFailConst)
	}
	if !n.anyNum {
		return held, failed
	}
	if n.multipleOf != nil {
		test(isMultiple(num, &n.multipleOf.n), numFailMultipleOf)
	}
	if n.minimum != nil {
		test(cmpNumber(num, &n.minimum.n) >= 0, numFailMinimum)
	}
	if n.maximum != nil {
		test(cmpNumber(num, &n.maximum.n) <= 0, numFailMaximum)
	}
	if n.exclMin != nil {
		test(cmpNumber(num, &n.exclMin.n) > 0, numFailExclMin)
	}
	if n.exclMax != nil {
		test(cmpNumber(num, &n.exclMax.n) < 0, numFailExclMax)
	}
	return held, failed
}

// hasNumber reports whether the enum holds the number num, the instance
// value v.
func (s *enumSet) hasNumber(num *number, v any) bool {
	if s.index != nil {
		return s.index.has(s.vals, v)
	}
	for i := range s.nums {
		if equalNumber(&s.nums[i], num) {
			return true
		}
	}
	return false
}

// has reports whether the enum holds v, which is not a number.
func (s *enumSet) has(v any) bool {
	if s.index != nil {
		return s.index.has(s.vals, v)
	}
	if x, ok := v.(string); ok {
		return slices.Contains(s.strs, x)
	}
	for _, m := range s.others {
		if jsonEqual(m, v) {
			return true
		}
	}
	return false
}
