package engine

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// checkRule evaluates one rule against the output, spending from b. It
// returns counted=false when the rule is skipped (if_present and nothing to
// check), or when b stopped it (the caller checks b). Its words are those
// of the wordings table.
func checkRule(r *Rule, out any, b *schema.Budget) (f *Finding, counted bool) {
	var room [8]Match // the matches of most rules, without an allocation
	matches := r.Field.appendMatches(room[:0], out, b)
	if b.Stopped() {
		return nil, false
	}
	fail := func(path, kind string, args failureArgs) (*Finding, bool) {
		if _, named := args["field"]; !named { // a target failure names its member's path
			args["field"] = r.FieldText
		}
		expected, found, detail := word(kind, args)
		return &Finding{
			Source: SourceIntegrity, Check: "consistency:" + r.Type, Path: path, Field: r.FieldText,
			Expected: expected, Found: found, Message: detail, Gate: GateRules,
		}, true
	}
	at := func(m Match) string { return callerPath(m.Loc().String()) }
	if len(matches) == 0 {
		if r.IfPresent {
			return nil, false
		}
		return fail(r.Field.String(), failNoValue, failureArgs{"what": "rule"})
	}
	switch r.Type {
	case RuleSumEquals:
		sum := 0.0
		addends := make([]json.Number, 0, len(matches))
		for _, m := range matches {
			if !b.Charge(readSteps(m.Value)) {
				return nil, false
			}
			n, ok := asNumber(m.Value)
			if !ok {
				return fail(m.Loc().String(), failNotNumber, failureArgs{"at": at(m), "value": valueText(m.Value)})
			}
			sum += n
			addends = append(addends, m.Value.(json.Number))
		}
		target, label, kind, args := r.target(out, b)
		if b.Stopped() {
			return nil, false
		}
		if kind != "" {
			return fail(r.Field.String(), kind, args)
		}
		if math.Abs(sum-target) > r.Tolerance {
			return fail(r.Field.String(), RuleSumEquals, failureArgs{"sum": formatSum(sum, addends), "target": label})
		}
	case RuleGTE, RuleLTE:
		target, label, kind, args := r.target(out, b)
		if b.Stopped() {
			return nil, false
		}
		if kind != "" {
			return fail(r.Field.String(), kind, args)
		}
		for _, m := range matches {
			if !b.Charge(readSteps(m.Value)) {
				return nil, false
			}
			n, ok := asNumber(m.Value)
			if !ok {
				return fail(m.Loc().String(), failNotNumber, failureArgs{"at": at(m), "value": valueText(m.Value)})
			}
			holds := n >= target-r.Tolerance
			if r.Type == RuleLTE {
				holds = n <= target+r.Tolerance
			}
			if !holds {
				return fail(m.Loc().String(), r.Type, failureArgs{"at": at(m), "value": valueText(m.Value), "target": label})
			}
		}
	case RuleExistsIn:
		allowed := r.Values
		label := "the given values"
		if r.Target != nil {
			allowed = nil
			for _, m := range r.Target.appendMatches(nil, out, b) {
				allowed = append(allowed, m.Value)
			}
			if b.Stopped() {
				return nil, false
			}
			label = "the values at " + r.memberText("in_field")
		}
		set := make(map[valueKey]bool, len(allowed))
		for _, a := range allowed {
			key, ok := chargedKey(a, b)
			if !ok {
				return nil, false
			}
			set[key] = true
		}
		for _, m := range matches {
			key, ok := chargedKey(m.Value, b)
			if !ok {
				return nil, false
			}
			if !set[key] {
				return fail(m.Loc().String(), RuleExistsIn, failureArgs{"at": at(m), "value": valueText(m.Value), "allowed": label})
			}
		}
	case RuleUnique:
		seen := make(map[valueKey]int, len(matches)) // value → index of its first match
		for i, m := range matches {
			key, ok := chargedKey(m.Value, b)
			if !ok {
				return nil, false
			}
			if first, dup := seen[key]; dup {
				return fail(m.Loc().String(), RuleUnique, failureArgs{"at": at(m), "value": valueText(m.Value), "first": at(matches[first])})
			}
			seen[key] = i
		}
	}
	return nil, true
}

// target reads the number a rule compares with, spending from b: the
// single number at r.Target, or r.Number. label names it in the rule's
// words: the path as the caller wrote it with the number as written there
// (`total (135.0)`), or the number as the caller wrote it. When it cannot
// be read, kind says why, a kind of wordings, and args are its words.
func (r *Rule) target(out any, b *schema.Budget) (n float64, label, kind string, args failureArgs) {
	member, literal := ruleTargets[r.Type][0], ruleTargets[r.Type][1]
	if r.Target == nil {
		return *r.Number, valueText(r.decoded[literal]), "", nil
	}
	written := r.memberText(member)
	var room [2]Match
	matches := r.Target.appendMatches(room[:0], out, b)
	args = failureArgs{"member": member, "field": written}
	switch {
	case len(matches) == 0:
		return 0, "", failTargetNone, args
	case len(matches) > 1:
		args["count"] = strconv.Itoa(len(matches))
		return 0, "", failTargetMany, args
	}
	n, ok := asNumber(matches[0].Value)
	if !ok {
		args["value"] = valueText(matches[0].Value)
		return 0, "", failTargetNotNumer, args
	}
	return n, written + " (" + valueText(matches[0].Value) + ")", "", nil
}

// memberText is a path member of the rule (equals_field, other_field,
// in_field) as the caller wrote it.
func (r *Rule) memberText(member string) string {
	s, _ := r.decoded[member].(string)
	return s
}

// asNumber is v as a float64 when it is a finite JSON number.
func asNumber(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := jsonnum.ParseFloat(string(n))
	return f, err == nil
}

// valueKey is equal for JSON-equal values: a string, the usual value of
// exists_in and unique, is itself (no copy); a number its float64 value as
// text; any other value its RFC 8785 form (canonicalText).
type valueKey struct {
	text     string
	isString bool
}

// chargedKey is v's valueKey, found at the cost of a step and a step per
// bytesPerStep bytes of the key, which b is charged; ok is false once b
// stops.
func chargedKey(v any, b *schema.Budget) (key valueKey, ok bool) {
	switch x := v.(type) {
	case string:
		key = valueKey{x, true}
	case json.Number:
		f, _ := jsonnum.ParseFloat(string(x))
		key.text = strconv.FormatFloat(f+0, 'g', -1, 64) // +0: -0 equals 0
	default:
		key.text = canonicalText(v)
	}
	return key, b.Charge(1 + len(key.text)/bytesPerStep)
}

// canonicalText is v's RFC 8785 form, the same text for JSON-equal values:
// numbers by value (1 and 1.0 are equal), objects' members in sorted order.
// A decoded value always marshals and canonicalizes; should it not, the
// marshalled text, with sorted keys, stands in.
func canonicalText(v any) string {
	text, _ := json.Marshal(v)
	if canonical, err := ijson.AppendCanonical(nil, text, 0); err == nil {
		text = canonical
	}
	return string(text)
}
