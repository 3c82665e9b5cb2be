package engine

import (
	"fmt"
	"strings"

	"github.com/verifier-dev/verifier/engine/schema"
)

// checkPlaceholders runs content:placeholder on every string value of the
// output, in document order (object keys sorted). It first counts in
// whatever order the maps give, which needs no location and no sorting; only
// when a string fails does it walk again, in order, to word the findings.
func checkPlaceholders(out any, gate bool, t *tally, findings []Finding) []Finding {
	strs, failed := countPlaceholders(out)
	t.passed += strs - failed
	t.total += strs
	if failed == 0 {
		return findings
	}
	var walk func(v any, loc Location)
	walk = func(v any, loc Location) {
		switch x := v.(type) {
		case string:
			if kind := placeholderKind(x); kind != "" {
				findings = append(findings, Finding{
					Source: SourceIntegrity, Check: CheckPlaceholder, Path: loc.String(),
					Expected: "real content", Found: brief(x),
					Message: fmt.Sprintf("%s is %s; replace it with the real value", loc, kind),
					Gate:    GateContent, Blocking: gate,
				})
			}
		case []any:
			for i, e := range x {
				walk(e, extend(loc, i))
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(x[k], extend(loc, k))
			}
		}
	}
	walk(out, nil)
	return findings
}

// countPlaceholders counts the string values of v and those of them that
// are placeholders.
func countPlaceholders(v any) (strs, failed int) {
	switch x := v.(type) {
	case string:
		if placeholderKind(x) != "" {
			return 1, 1
		}
		return 1, 0
	case []any:
		for _, e := range x {
			s, f := countPlaceholders(e)
			strs, failed = strs+s, failed+f
		}
	case map[string]any:
		for _, e := range x {
			s, f := countPlaceholders(e)
			strs, failed = strs+s, failed+f
		}
	}
	return strs, failed
}

// checkUndeclared runs content:undeclared_field on every object the schema
// describes with properties: described of them, undeclared those that hold
// keys the schema does not declare.
func checkUndeclared(out any, described int, undeclared []schema.Described, gate bool, t *tally, findings []Finding) []Finding {
	t.passed += described - len(undeclared)
	t.total += described
	for _, d := range undeclared {
		loc := PointerLocation(out, d.InstancePath)
		keys := make([]string, len(d.Undeclared))
		for i, k := range d.Undeclared {
			keys[i] = truncate(k, 20)
		}
		findings = append(findings, Finding{
			Source: SourceIntegrity, Check: CheckUndeclared, Path: loc.String(),
			Expected: "only keys the schema declares",
			Found:    truncate("undeclared: "+strings.Join(keys, ", "), maxQuote),
			Message:  fmt.Sprintf("%s has %d key(s) the schema does not declare; remove them or declare them in properties", loc, len(keys)),
			Gate:     GateContent, Blocking: gate,
		})
	}
	return findings
}
