package engine

import (
	"fmt"
	"strings"

	"github.com/verifier-dev/verifier/engine/schema"
)

// checkPlaceholders runs content:placeholder on every string value of the
// output, in document order (object keys sorted).
func checkPlaceholders(out any, gate bool, t *tally, findings []Finding) []Finding {
	var walk func(v any, loc Location)
	walk = func(v any, loc Location) {
		switch x := v.(type) {
		case string:
			kind := placeholderKind(x)
			t.record(kind == "")
			if kind != "" {
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

// checkUndeclared runs content:undeclared_field on every object the schema
// describes with properties.
func checkUndeclared(out any, described []schema.Described, gate bool, t *tally, findings []Finding) []Finding {
	for _, d := range described {
		t.record(len(d.Undeclared) == 0)
		if len(d.Undeclared) == 0 {
			continue
		}
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
