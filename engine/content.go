package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/verifier-dev/verifier/engine/schema"
)

// checkPlaceholders runs content:placeholder on every string value of the
// output, in document order (object keys sorted), spending from b (the
// caller checks it). It first counts in whatever order the maps give, which
// needs no location and no sorting; only when a string fails does it walk
// again, in order, to word the findings, as far as the outcome keeps them.
func checkPlaceholders(out any, gate bool, t *tally, o *Outcome, b *schema.Budget) {
	strs, failed := countPlaceholders(out, &passing{b: b})
	if b.Stopped() {
		return
	}
	t.passed += strs - failed
	t.total += strs
	if failed == 0 {
		return
	}
	added := 0
	p := passing{b: b}
	// walk reports false once no more findings are needed or b stopped.
	var walk func(v any, loc Location) bool
	walk = func(v any, loc Location) bool {
		if added == failed || !o.wants(gate, true) || !p.visit() {
			return false
		}
		switch x := v.(type) {
		case string:
			if !b.Charge(len(x) / bytesPerStep) {
				return false
			}
			if kind := placeholderKind(x); kind != "" {
				o.add(Finding{
					Source: SourceIntegrity, Check: CheckPlaceholder, Path: loc.String(),
					Expected: "real content", Found: brief(x),
					Message: fmt.Sprintf("%s is %s; replace it with the real value", loc, kind),
					Gate:    GateContent, Blocking: gate,
				})
				added++
			}
		case []any:
			for i, e := range x {
				if !walk(e, append(slices.Clip(loc), i)) {
					return false
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if !walk(x[k], append(slices.Clip(loc), k)) {
					return false
				}
			}
		}
		return true
	}
	walk(out, nil)
	if !b.Stopped() {
		o.count(failed-added, gate, true, CheckPlaceholder)
	}
}

// countPlaceholders counts the string values of v and those of them that
// are placeholders, spending from p's budget: a step per valuesPerStep
// values and per bytesPerStep bytes of a string. Once the budget stops, the
// counts are incomplete.
func countPlaceholders(v any, p *passing) (strs, failed int) {
	if !p.visit() {
		return 0, 0
	}
	switch x := v.(type) {
	case string:
		if len(x) >= bytesPerStep && !p.b.Charge(len(x)/bytesPerStep) {
			return 0, 0
		}
		if placeholderKind(x) != "" {
			return 1, 1
		}
		return 1, 0
	case []any:
		for _, e := range x {
			s, f := countPlaceholders(e, p)
			strs, failed = strs+s, failed+f
		}
	case map[string]any:
		for _, e := range x {
			s, f := countPlaceholders(e, p)
			strs, failed = strs+s, failed+f
		}
	}
	return strs, failed
}

// checkUndeclared runs content:undeclared_field on every object the schema
// describes with properties (res.Described of them), those holding keys the
// schema does not declare failing: res.Undeclared, and
// res.Omitted.Undeclared more. It words the findings the outcome keeps,
// spending from b a step per object and per valuesPerStep keys named (the
// caller checks b).
func checkUndeclared(out any, res *schema.Result, gate bool, t *tally, o *Outcome, b *schema.Budget) {
	failed := len(res.Undeclared)
	if res.Omitted != nil {
		failed += res.Omitted.Undeclared
	}
	t.passed += res.Described - failed
	t.total += res.Described
	added := 0
	for _, d := range res.Undeclared {
		if !o.wants(gate, true) {
			break
		}
		if !b.Charge(1 + len(d.Undeclared)/valuesPerStep) {
			return
		}
		loc := PointerLocation(out, d.InstancePath)
		keys := make([]string, len(d.Undeclared))
		for i, k := range d.Undeclared {
			keys[i] = truncate(k, 20)
		}
		o.add(Finding{
			Source: SourceIntegrity, Check: CheckUndeclared, Path: loc.String(),
			Expected: "only keys the schema declares",
			Found:    truncate("undeclared: "+strings.Join(keys, ", "), maxQuote),
			Message:  fmt.Sprintf("%s has %d key(s) the schema does not declare; remove them or declare them in properties", loc, len(keys)),
			Gate:     GateContent, Blocking: gate,
		})
		added++
	}
	o.count(failed-added, gate, true, CheckUndeclared)
}
