package schema

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/engine/format"
)

// leaf applies leaf schema n to v without recording anything, and counts
// its checks when they all hold (and count is set). Its steps are charged
// before the checks, one of which can cost as much as the value is long.
// It returns how many checks held, or -1 when one failed, v is no valid
// value or the evaluation must stop: the caller then evaluates v again on
// the recording path (descend), which charges the steps again. For a
// number, failed is the mask of the checks that failed (numChecks), with
// held counting the others, uncounted: what recordNumber records.
func (e *evaluator) leaf(n *node, v any, count bool) (held int, failed uint8) {
	if e.abort {
		return -1, 0
	}
	k := 0
	var num number
	switch x := v.(type) {
	case string:
		if e.steps += 1 + stringSteps(n, x); e.over() {
			return -1, 0
		}
		if n.types != 0 {
			if n.types&typeString == 0 {
				return -1, 0
			}
			k++
		}
		if n.enum != nil {
			if !n.enum.hasString(x) {
				return -1, 0
			}
			k++
		}
		if n.hasConst {
			if c, ok := n.constVal.(string); !ok || c != x {
				return -1, 0
			}
			k++
		}
		if n.anyStr {
			if n.minLength >= 0 || n.maxLength >= 0 {
				// b bytes of UTF-8 hold between ceil(b/4) and b
				// characters; when those decide, nothing is counted.
				l := len(x)
				if n.maxLength >= 0 && l > n.maxLength || n.minLength >= 0 && (l+3)/4 < n.minLength {
					l = utf8.RuneCountInString(x)
				}
				if n.minLength >= 0 {
					if l < n.minLength {
						return -1, 0
					}
					k++
				}
				if n.maxLength >= 0 {
					if l > n.maxLength {
						return -1, 0
					}
					k++
				}
			}
			if n.pattern != nil {
				if !n.pattern.match(x) {
					return -1, 0
				}
				k++
			}
			if n.formatAssert {
				if !format.Valid(n.format, x) {
					return -1, 0
				}
				k++
			}
		}
		return e.held(k, count), 0
	case json.Number:
		if e.steps += 1 + numSteps(n, x); e.over() || !parseNumber(string(x), &num) {
			return -1, 0
		}
	case map[string]any, []any, bool, nil:
		if e.steps += 1 + valueSteps(n, v); e.over() {
			return -1, 0
		}
		if n.types != 0 {
			if !typeMatches(n.types, v, false) {
				return -1, 0
			}
			k++
		}
		if n.enum != nil {
			if !n.enum.has(v) {
				return -1, 0
			}
			k++
		}
		if n.hasConst {
			if !jsonEqual(n.constVal, v) {
				return -1, 0
			}
			k++
		}
		return e.held(k, count), 0
	default:
		if e.steps += 1 + valueSteps(n, v); e.over() || !numberOf(v, &num) {
			return -1, 0
		}
	}
	if k, failed = numberChecks(n, &num, v); failed == 0 {
		e.held(k, count)
	}
	return k, failed
}

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

func (s *enumSet) hasString(x string) bool {
	if s.index != nil {
		return s.index.has(s.vals, x)
	}
	return slices.Contains(s.strs, x)
}
