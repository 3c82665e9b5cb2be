package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// checkRule evaluates one rule against the output, spending from b. It
// returns counted=false when the rule is skipped (if_present and nothing to
// check), or when b stopped it (the caller checks b).
func checkRule(r *Rule, out any, b *schema.Budget) (f *Finding, counted bool) {
	var room [8]Match // the matches of most rules, without an allocation
	matches := r.Field.appendMatches(room[:0], out, b)
	if b.Stopped() {
		return nil, false
	}
	fail := func(path, expected, found, msg string) (*Finding, bool) {
		return &Finding{
			Source: SourceIntegrity, Check: "consistency:" + r.Type, Path: path,
			Expected: expected, Found: found, Message: msg, Gate: GateRules,
		}, true
	}
	if len(matches) == 0 {
		if r.IfPresent {
			return nil, false
		}
		where := r.Field.String()
		return fail(where, "a value at "+where, "no value",
			fmt.Sprintf("no value at %s; add it, or set if_present to skip the rule when it is absent", where))
	}
	switch r.Type {
	case RuleSumEquals:
		sum := 0.0
		for _, m := range matches {
			if !b.Charge(readSteps(m.Value)) {
				return nil, false
			}
			n, ok := asNumber(m.Value)
			if !ok {
				return fail(m.Loc().String(), "number", brief(m.Value),
					fmt.Sprintf("%s must hold numbers to sum, found %s at %s", r.Field, typeName(m.Value), m.Loc()))
			}
			sum += n
		}
		target, tf := r.target(out, r.EqualsField, r.Equals, "equals_field", b)
		if b.Stopped() {
			return nil, false
		}
		if tf != nil {
			return fail(r.Field.String(), tf.expected, tf.found, tf.message)
		}
		if math.Abs(sum-target) > r.Tolerance {
			label := targetLabel(r.EqualsField)
			return fail(r.Field.String(), fmt.Sprintf("sum equal to %s (%s, tolerance %s)", formatNumber(target), label, formatNumber(r.Tolerance)),
				"sum "+formatNumber(sum),
				fmt.Sprintf("values sum to %s, expected %s (%s)", formatNumber(sum), label, formatNumber(target)))
		}
	case RuleGTE, RuleLTE:
		target, tf := r.target(out, r.OtherField, r.Value, "other_field", b)
		if b.Stopped() {
			return nil, false
		}
		if tf != nil {
			return fail(r.Field.String(), tf.expected, tf.found, tf.message)
		}
		op, word := "≥", "at least"
		if r.Type == RuleLTE {
			op, word = "≤", "at most"
		}
		for _, m := range matches {
			if !b.Charge(readSteps(m.Value)) {
				return nil, false
			}
			n, ok := asNumber(m.Value)
			if !ok {
				return fail(m.Loc().String(), "number "+op+" "+formatNumber(target), brief(m.Value),
					fmt.Sprintf("%s must be a number to compare, found %s", m.Loc(), typeName(m.Value)))
			}
			holds := n >= target-r.Tolerance
			if r.Type == RuleLTE {
				holds = n <= target+r.Tolerance
			}
			if !holds {
				label := targetLabel(r.OtherField)
				return fail(m.Loc().String(), fmt.Sprintf("%s %s (%s)", op, formatNumber(target), label), brief(m.Value),
					fmt.Sprintf("%s is %s, must be %s %s (%s)", m.Loc(), formatNumber(n), word, formatNumber(target), label))
			}
		}
	case RuleExistsIn:
		allowed := r.Values
		label := "the values list"
		if r.InField != nil {
			allowed = nil
			for _, m := range r.InField.appendMatches(nil, out, b) {
				allowed = append(allowed, m.Value)
			}
			if b.Stopped() {
				return nil, false
			}
			label = "values at " + r.InField.String()
		}
		set := newValueIndex(len(allowed))
		for i, a := range allowed {
			if !set.add(a, i, b) {
				return nil, false
			}
		}
		for _, m := range matches {
			_, ok := set.find(m.Value, b)
			if b.Stopped() {
				return nil, false
			}
			if !ok {
				return fail(m.Loc().String(), "one of "+label, brief(m.Value),
					fmt.Sprintf("%s is not among %s", m.Loc(), label))
			}
		}
	case RuleUnique:
		seen := newValueIndex(len(matches)) // value → index of its first match
		for i, m := range matches {
			first, dup := seen.find(m.Value, b)
			if b.Stopped() {
				return nil, false
			}
			if dup {
				return fail(m.Loc().String(), "values distinct from each other", brief(m.Value),
					fmt.Sprintf("%s repeats the value at %s", m.Loc(), matches[first].Loc()))
			}
			seen.add(m.Value, i, nil)
		}
	}
	return nil, true
}

// targetFailure is why a rule's comparison target could not be read.
type targetFailure struct{ expected, found, message string }

// target reads the number a rule compares with: the single number at path, or
// the literal.
func (r *Rule) target(out any, path *Path, literal *float64, fieldName string, b *schema.Budget) (float64, *targetFailure) {
	if path == nil {
		return *literal, nil
	}
	var room [2]Match
	matches := path.appendMatches(room[:0], out, b)
	switch {
	case len(matches) == 0:
		at := path.String()
		return 0, &targetFailure{"a number at " + at, "no value",
			fmt.Sprintf("%s names %s, which has no value", fieldName, at)}
	case len(matches) > 1:
		at := path.String()
		return 0, &targetFailure{"one number at " + at, fmt.Sprintf("%d values", len(matches)),
			fmt.Sprintf("%s names %s, which resolves to %d values; name a single value", fieldName, at, len(matches))}
	}
	n, ok := asNumber(matches[0].Value)
	if !ok {
		at := path.String()
		return 0, &targetFailure{"a number at " + at, brief(matches[0].Value),
			fmt.Sprintf("%s names %s, which holds %s, not a number", fieldName, at, typeName(matches[0].Value))}
	}
	return n, nil
}

// targetLabel names what a rule compares with, in a message: the path of
// target without its `$.`, or the given value.
func targetLabel(path *Path) string {
	if path == nil {
		return "the given value"
	}
	return strings.TrimPrefix(path.String(), "$.")
}

func asNumber(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := jsonnum.ParseFloat(string(n))
	return f, err == nil
}

// valueIndex maps JSON values to ints, JSON-equal values to the same entry.
// Strings, the usual values of exists_in and unique, are their own keys;
// every other value goes by its equalityKey.
type valueIndex struct {
	strs, others map[string]int
	size         int // the entries expected, for each map when first used
}

func newValueIndex(size int) *valueIndex {
	return &valueIndex{size: size}
}

// add maps v to i, unless v has an entry already. It spends from b (nil:
// nothing) and reports false, adding nothing, once b stops.
func (x *valueIndex) add(v any, i int, b *schema.Budget) bool {
	m, k, ok := x.entry(v, b)
	if !ok {
		return false
	}
	if _, ok := m[k]; !ok {
		m[k] = i
	}
	return true
}

// find returns the int v maps to. It spends from b (nil: nothing), and
// finds nothing once b stops.
func (x *valueIndex) find(v any, b *schema.Budget) (int, bool) {
	m, k, ok := x.entry(v, b)
	if !ok {
		return 0, false
	}
	i, ok := m[k]
	return i, ok
}

// entry is v's map and key, found at the cost of a step and a step per
// bytesPerStep bytes of the key, which b (when not nil) is charged; ok is
// false once b stops. A map is made, sized for every entry, when first
// needed: the values of a list are mostly all strings or all not.
func (x *valueIndex) entry(v any, b *schema.Budget) (m map[string]int, key string, ok bool) {
	if s, isStr := v.(string); isStr {
		if x.strs == nil {
			x.strs = make(map[string]int, x.size)
		}
		m, key = x.strs, s
	} else {
		if x.others == nil {
			x.others = make(map[string]int, x.size)
		}
		m, key = x.others, equalityKey(v)
	}
	return m, key, b == nil || b.Charge(1+len(key)/bytesPerStep)
}

// equalityKey maps a value to a string that is equal for JSON-equal values:
// numbers by float64 value (1 and 1.0 are equal), objects by sorted keys.
func equalityKey(v any) string {
	var b strings.Builder
	writeEqualityKey(&b, v)
	return b.String()
}

func writeEqualityKey(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("n")
	case bool:
		if x {
			b.WriteString("t")
		} else {
			b.WriteString("f")
		}
	case json.Number:
		f, _ := jsonnum.ParseFloat(string(x))
		if f == 0 {
			f = 0 // -0 equals 0
		}
		b.WriteString("#")
		b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteString("[")
		for _, e := range x {
			writeEqualityKey(b, e)
			b.WriteString(",")
		}
		b.WriteString("]")
	case map[string]any:
		b.WriteString("{")
		for _, k := range sortedKeys(x) {
			b.WriteString(strconv.Quote(k))
			b.WriteString(":")
			writeEqualityKey(b, x[k])
			b.WriteString(",")
		}
		b.WriteString("}")
	}
}
