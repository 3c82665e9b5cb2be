package schema

import (
	"encoding/json"
	"slices"
)

// leaf counts the checks of leaf schema n on v when they all hold; false
// sends the caller to the recording path.
func (e *evaluator) leaf(n *node, v any, count bool) bool {
	// Charged before the checks: one of them can cost as much as the
	// value is long.
	if e.steps += 1 + valueSteps(n, v); e.abort || e.over() {
		return false
	}
	k, failed := leafChecks(n, v)
	if k < 0 || failed != 0 {
		return false
	}
	if count {
		e.total += k
		e.passed += k
	}
	return true
}

// leafChecks evaluates a leaf schema without recording anything. It returns
// the number of checks that held and, for a number, a mask of those that
// failed (numChecks; leafNumber). held is -1 when a check on another value
// failed: the caller then evaluates again on the recording path.
func leafChecks(n *node, v any) (held int, failed uint8) {
	k := 0
	switch x := v.(type) {
	case string:
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
					l = runeCount(x)
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
				if !formatValid(n.format, x) {
					return -1, 0
				}
				k++
			}
		}
		return k, 0
	case json.Number:
		return leafNumber(n, x)
	case map[string]any, []any, bool, nil:
		if n.types != 0 {
			if !typeMatches(n.types, v, false) {
				return -1, 0
			}
			k++
		}
		if n.enum != nil {
			if !n.enum.has(v, nil, false) {
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
		return k, 0
	}
	return -1, 0
}

// cmpBad is what cmpBound returns for a malformed literal; it fails every
// comparison.
const cmpBad = 2

// hasLiteral reports whether a number member is written exactly as lit.
func (s *enumSet) hasLiteral(lit string) bool {
	if s.index != nil {
		return false // hasNumber's lookup is as quick
	}
	for _, m := range s.numLits {
		if m == lit {
			return true
		}
	}
	return false
}

func (s *enumSet) hasNumber(num *number) bool {
	if s.index != nil {
		return s.index.hasNumber(s.vals, num)
	}
	for i := range s.nums {
		if cmpNumber(s.nums[i], *num) == 0 {
			return true
		}
	}
	return false
}

func (s *enumSet) has(v any, num *number, isNum bool) bool {
	if x, ok := v.(string); ok {
		return s.hasString(x)
	}
	if isNum {
		return s.hasNumber(num)
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

// The bits of leafNumber's mask of failed checks, in value's order.
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

// numChecks names the keyword of each bit of leafNumber's mask: bit i
// stands for numChecks[i].
var numChecks = [...]kwID{kwType, kwEnum, kwConst, kwMultipleOf, kwMinimum, kwMaximum, kwExclusiveMinimum, kwExclusiveMaximum}

// leafNumber is leafChecks for a number. Integer literals against integer
// bounds and small enums, and any literal against bounds of 0, are decided
// on the spot (numInt, numSign); everything else, and every failure of a
// sign test (the literal may be malformed), goes to leafNumberAny.
func leafNumber(n *node, x json.Number) (held int, failed uint8) {
	if !n.numInt {
		return leafNumberAny(n, x)
	}
	if n.types != 0 {
		held = 1
	}
	iv, ok := litSmall(string(x)) // inlined: most literals need no call
	if !ok {
		iv, ok = litInt(string(x))
	}
	if ok {
		if s := n.enum; s != nil {
			if slices.Contains(s.ints, iv) {
				held++
			} else {
				failed |= numFailEnum
			}
		}
		if k := n.minimum; k != nil {
			if iv >= k.i64 {
				held++
			} else {
				failed |= numFailMinimum
			}
		}
		if k := n.maximum; k != nil {
			if iv <= k.i64 {
				held++
			} else {
				failed |= numFailMaximum
			}
		}
		if k := n.exclMin; k != nil {
			if iv > k.i64 {
				held++
			} else {
				failed |= numFailExclMin
			}
		}
		if k := n.exclMax; k != nil {
			if iv < k.i64 {
				held++
			} else {
				failed |= numFailExclMax
			}
		}
		return held, failed
	}
	if !n.numSign {
		return leafNumberAny(n, x)
	}
	sign := litSign(string(x))
	if !((n.minimum == nil || sign >= 0) && (n.maximum == nil || sign <= 0) &&
		(n.exclMin == nil || sign > 0) && (n.exclMax == nil || sign < 0)) {
		return leafNumberAny(n, x)
	}
	return held + int(n.numBounds), 0
}

// leafNumberAny is leafNumber for any number leaf. It parses only what the
// keywords need: the type and integer bounds take one scan of the literal,
// an enum is first matched literally, and only the rest goes through
// parseNumber. It
// runs every check, so that a caller can record the failed ones without
// evaluating them again (their order is numChecks'); a malformed literal
// that fails a check gets held -1, like a failed check on another value.
func leafNumberAny(n *node, x json.Number) (held int, failed uint8) {
	lit := string(x)
	var iv int64
	isI := false
	if n.anyNum || n.types&(typeNumber|typeInteger) == typeInteger {
		iv, isI = litInt(lit)
	}
	var num number
	parsed := false
	if n.types != 0 {
		ok := n.types&typeNumber != 0
		if !ok && n.types&typeInteger != 0 {
			if ok = isI; !ok {
				num, parsed = parseNumber(lit)
				ok = parsed && num.isInt()
			}
		}
		if ok {
			held++
		} else {
			failed |= numFailType
		}
	}
	if n.enum != nil {
		ok := n.enum.hasLiteral(lit)
		if !ok {
			if !parsed {
				num, parsed = parseNumber(lit)
			}
			ok = parsed && n.enum.hasNumber(&num)
		}
		if ok {
			held++
		} else {
			failed |= numFailEnum
		}
	}
	if n.hasConst {
		if jsonEqual(n.constVal, x) {
			held++
		} else {
			failed |= numFailConst
		}
	}
	if n.anyNum {
		if n.multipleOf != nil {
			if !parsed {
				num, parsed = parseNumber(lit)
			}
			if parsed && isMultiple(num, n.multipleOf.n) {
				held++
			} else {
				failed |= numFailMultipleOf
			}
		}
		if n.minimum != nil {
			c := cmpBound(n.minimum, lit, iv, isI, &num, &parsed)
			if c >= 0 && c != cmpBad {
				held++
			} else {
				failed |= numFailMinimum
			}
		}
		if n.maximum != nil {
			if cmpBound(n.maximum, lit, iv, isI, &num, &parsed) <= 0 {
				held++
			} else {
				failed |= numFailMaximum
			}
		}
		if n.exclMin != nil {
			c := cmpBound(n.exclMin, lit, iv, isI, &num, &parsed)
			if c > 0 && c != cmpBad {
				held++
			} else {
				failed |= numFailExclMin
			}
		}
		if n.exclMax != nil {
			if cmpBound(n.exclMax, lit, iv, isI, &num, &parsed) < 0 {
				held++
			} else {
				failed |= numFailExclMax
			}
		}
	}
	if failed != 0 && !isI && !parsed {
		if _, ok := parseNumber(lit); !ok {
			return -1, 0 // malformed: the recording path rejects it
		}
	}
	return held, failed
}

// cmpBound compares the literal lit (iv when isI) with a numeric keyword,
// parsing lit into *num only when no quick test decides.
func cmpBound(kw *numKw, lit string, iv int64, isI bool, num *number, parsed *bool) int {
	if kw.isI && isI {
		switch {
		case iv < kw.i64:
			return -1
		case iv > kw.i64:
			return 1
		}
		return 0
	}
	if kw.zero {
		return litSign(lit)
	}
	if !*parsed {
		var ok bool
		if *num, ok = parseNumber(lit); !ok {
			return cmpBad
		}
		*parsed = true
	}
	return cmpNumber(*num, kw.n)
}
