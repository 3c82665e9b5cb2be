package engine

import (
	"encoding/json"
	"slices"
	"strings"
)

// stringifiedFix is what the root schema:type finding adds when
// submitted_output is a string holding the JSON value the schema wants, a
// common mistake of agents calling over MCP.
const stringifiedFix = "send the JSON value itself as submitted_output, not a string holding JSON"

// markStringifiedOutput adds stringifiedFix to the root schema:type finding
// when output is a string whose content parses as a JSON object or array
// and the schema wants that kind at the root.
func markStringifiedOutput(findings []Finding, output any) {
	s, ok := output.(string)
	if !ok {
		return
	}
	kind := stringifiedKind(s)
	if kind == "" {
		return
	}
	for i := range findings {
		f := &findings[i]
		if f.Check != "schema:type" || f.Path != "$" || !wantsType(f.Expected, kind) {
			continue
		}
		f.Expected += " (" + stringifiedFix + ")"
		f.Message += " submitted_output is a string holding a JSON " + kind + ": " + stringifiedFix + "."
	}
}

// stringifiedKind is "object" or "array" when s is the JSON text of one,
// else "".
func stringifiedKind(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') || !json.Valid([]byte(t)) {
		return ""
	}
	if t[0] == '{' {
		return "object"
	}
	return "array"
}

// wantsType reports whether a type failure's expected text (`object`,
// `object or array`, …) names kind.
func wantsType(expected, kind string) bool {
	return slices.Contains(strings.FieldsFunc(expected, func(r rune) bool { return r == ' ' || r == ',' }), kind)
}
