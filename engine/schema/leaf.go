package schema

import (
	"encoding/json"
	"math/bits"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/engine/format"
)

// checks charges steps (the caller's) and the cost of n's assertions on
// the value v (valueSteps, spelt out for its cases here), then runs every
// assertion of n on v itself: type, enum, const, and the string or the
// number keywords, all exact, recording nothing. It returns how many held
// and the mask of those that failed (bit kw for keyword kw, so that
// failures are recorded in keyword order), or held -1 when the evaluation
// must stop or v is no value the evaluator supports (a json.Number that is
// no JSON number, a Go type of its own). When count is set and every check
// held, it counts them.
//
// Applied to a leaf schema's child value (count set, steps 1 for the
// application), a failure or held -1 sends the caller to the recording
// path: leafFailed, or descend, which evaluates v again.
func (e *evaluator) checks(n *node, v any, steps int, count bool) (held int, failed uint64) {
	if e.abort {
		return -1, 0
	}
	var t uint8 // the type bits v matches
	var s string
	lit, isLit := v.(json.Number)
	switch x := v.(type) {
	case string:
		t, s = typeString, x
		steps += stringSteps(n, x)
	case map[string]any:
		t = typeObject
	case []any:
		t = typeArray
	case bool:
		t = typeBool
	case nil:
		t = typeNull
	case json.Number:
		steps += numSteps(n, x)
	}
	if t&(typeObject|typeArray) != 0 {
		steps += valueSteps(n, v)
	}
	if e.steps += steps; e.over() {
		return -1, 0
	}
	test := func(pass bool, kw kwID) {
		if pass {
			held++
		} else {
			failed |= 1 << kw
		}
	}
	var num number
	if t == 0 {
		if isLit && !parseNumber(string(lit), &num) || !isLit && !numberOf(v, &num) {
			return -1, 0
		}
		t = typeNumber
		if num.isInt() {
			t |= typeInteger
		}
	}
	if n.types != 0 {
		test(n.types&t != 0, kwType)
	}
	if n.enum != nil {
		switch {
		case t == typeString:
			test(n.enum.hasString(s), kwEnum)
		case t&typeNumber != 0:
			test(n.enum.hasNumber(&num), kwEnum)
		default:
			test(n.enum.has(v), kwEnum)
		}
	}
	if n.hasConst {
		test(jsonEqual(n.constVal, v), kwConst)
	}
	if t == typeString && n.anyStr {
		if n.minLength >= 0 || n.maxLength >= 0 {
			// b bytes of UTF-8 hold between ceil(b/4) and b characters;
			// when those decide, the characters are not counted.
			l := len(s)
			if n.maxLength >= 0 && l > n.maxLength || n.minLength >= 0 && (l+3)/4 < n.minLength {
				l = utf8.RuneCountInString(s)
			}
			if n.minLength >= 0 {
				test(l >= n.minLength, kwMinLength)
			}
			if n.maxLength >= 0 {
				test(l <= n.maxLength, kwMaxLength)
			}
		}
		if n.pattern != nil {
			test(n.pattern.match(s), kwPattern)
		}
		if n.formatAssert {
			test(format.Valid(n.format, s), kwFormat)
		}
	}
	if t&typeNumber != 0 && n.anyNum {
		if n.multipleOf != nil {
			test(isMultiple(&num, &n.multipleOf.n), kwMultipleOf)
		}
		if n.minimum != nil {
			test(cmpNumber(&num, &n.minimum.n) >= 0, kwMinimum)
		}
		if n.maximum != nil {
			test(cmpNumber(&num, &n.maximum.n) <= 0, kwMaximum)
		}
		if n.exclMin != nil {
			test(cmpNumber(&num, &n.exclMin.n) > 0, kwExclusiveMinimum)
		}
		if n.exclMax != nil {
			test(cmpNumber(&num, &n.exclMax.n) < 0, kwExclusiveMaximum)
		}
	}
	if failed == 0 && count {
		e.total += held
		e.passed += held
	}
	return held, failed
}

// record counts the held checks of n on v and records at location f each
// that failed, in keyword order.
func (e *evaluator) record(n *node, v any, f *frame, count bool, held int, failed uint64) {
	if count {
		e.total += held
		e.passed += held
	}
	for m := failed; m != 0; m &= m - 1 {
		r := failure{kw: kwID(bits.TrailingZeros64(m)), node: n.id, v: v}
		if r.kw == kwMinLength || r.kw == kwMaxLength {
			r.a = utf8.RuneCountInString(v.(string))
		}
		e.fail(count, f, r)
	}
}

func (s *enumSet) hasNumber(num *number) bool {
	if s.index != nil {
		return s.index.hasNumber(s.vals, num)
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
	if x, ok := v.(string); ok {
		return s.hasString(x)
	}
	if s.index != nil {
		return s.index.has(s.vals, v)
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
		return s.index.hasString(s.vals, x)
	}
	for _, m := range s.strs {
		if m == x {
			return true
		}
	}
	return false
}
