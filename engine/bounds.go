package engine

import (
	"encoding/json"
	"fmt"

	"github.com/verifier-dev/verifier/engine/schema"
)

// checkBound evaluates one bound, spending from budget. It returns
// counted=false when the bound is skipped (if_present and no value), or
// when budget stopped it (the caller checks budget).
func checkBound(b *Bound, out any, budget *schema.Budget) (f *Finding, counted bool) {
	fail := func(path, found, msg string) (*Finding, bool) {
		return &Finding{
			Source: SourceIntegrity, Check: CheckBounds, Path: path, Expected: b.describe(),
			Found: found, Message: msg, Gate: GateBounds, Blocking: true,
		}, true
	}
	var room [8]Match // the matches of most bounds, without an allocation
	matches := b.Path.appendMatches(room[:0], out, budget)
	if budget.Stopped() {
		return nil, false
	}
	if len(matches) == 0 {
		if b.IfPresent {
			return nil, false
		}
		where := b.Path.String()
		return fail(where, "no value", fmt.Sprintf("no value at %s; add it, or set if_present to skip the bound when it is absent", where))
	}
	for _, m := range matches {
		if !budget.Charge(readSteps(m.Value)) {
			return nil, false
		}
		if !b.holds(m.Value) {
			return fail(m.Loc().String(), brief(m.Value), fmt.Sprintf("%s is %s, expected %s", m.Loc(), brief(m.Value), b.describe()))
		}
	}
	return nil, true
}

// holds reports whether v is of the bound's kind and within it.
func (b *Bound) holds(v any) bool {
	limit := b.Min
	if limit == nil {
		limit = b.Max
	}
	if limit.IsTime {
		s, ok := v.(string)
		if !ok {
			return false
		}
		t, ok := parseTime(s)
		if !ok {
			return false
		}
		return (b.Min == nil || !t.t.Before(b.Min.Time.t)) && (b.Max == nil || !t.t.After(b.Max.Time.t))
	}
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, ok := asNumber(n)
	return ok && (b.Min == nil || f >= b.Min.Number) && (b.Max == nil || f <= b.Max.Number)
}

func (b *Bound) describe() string {
	kind := "number"
	if (b.Min != nil && b.Min.IsTime) || (b.Max != nil && b.Max.IsTime) {
		kind = "date"
	}
	switch {
	case b.Min != nil && b.Max != nil:
		return fmt.Sprintf("%s in [%s, %s]", kind, b.Min.Text, b.Max.Text)
	case b.Min != nil:
		return fmt.Sprintf("%s ≥ %s", kind, b.Min.Text)
	default:
		return fmt.Sprintf("%s ≤ %s", kind, b.Max.Text)
	}
}
