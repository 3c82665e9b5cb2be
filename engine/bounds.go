package engine

import (
	"cmp"
	"fmt"

	"github.com/verifier-dev/verifier/engine/schema"
)

// checkBound evaluates one bound, spending from budget. It returns
// counted=false when the bound is skipped (if_present and no value), or
// when budget stopped it (the caller checks budget). Its words are those of
// the wordings table.
func checkBound(b *Bound, out any, budget *schema.Budget) (f *Finding, counted bool) {
	fail := func(path, kind string, args failureArgs) (*Finding, bool) {
		args["field"], args["range"] = b.Key, b.describe()
		expected, found, detail := word(kind, args)
		return &Finding{
			Source: SourceIntegrity, Check: CheckBounds, Path: path, Field: b.Key, Expected: expected,
			Found: found, Message: detail, Gate: GateBounds, Blocking: true,
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
		return fail(b.Path.String(), failNoValue, failureArgs{"what": "bound"})
	}
	for _, m := range matches {
		if !budget.Charge(readSteps(m.Value)) {
			return nil, false
		}
		if !b.holds(m.Value) {
			return fail(m.Loc().String(), CheckBounds, failureArgs{"at": callerPath(m.Loc().String()), "value": valueText(m.Value)})
		}
	}
	return nil, true
}

// holds reports whether v is of the bound's kind and within it.
func (b *Bound) holds(v any) bool {
	if cmp.Or(b.Min, b.Max).IsTime {
		s, _ := v.(string) // "" for any other value: no time
		t, ok := parseTime(s)
		return ok && (b.Min == nil || !t.Before(b.Min.Time)) && (b.Max == nil || !t.After(b.Max.Time))
	}
	f, ok := asNumber(v)
	return ok && (b.Min == nil || f >= b.Min.Number) && (b.Max == nil || f <= b.Max.Number)
}

func (b *Bound) describe() string {
	kind := "number"
	if cmp.Or(b.Min, b.Max).IsTime {
		kind = "date"
	}
	switch {
	case b.Min != nil && b.Max != nil:
		return fmt.Sprintf("a %s in [%s, %s]", kind, b.Min.Text, b.Max.Text)
	case b.Min != nil:
		return fmt.Sprintf("a %s at least %s", kind, b.Min.Text)
	default:
		return fmt.Sprintf("a %s at most %s", kind, b.Max.Text)
	}
}
