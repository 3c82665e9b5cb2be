package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestNearMissMembers: an unknown member that is a near miss of a known one
// (another case or word separator, a small typo) gets "did you mean" with
// the known name in its fix, at the top level, in a rule and in a bound;
// one that is nothing like any gets the plain fix, and no fix echoes the
// unknown name.
func TestNearMissMembers(t *testing.T) {
	const base = `"task_id":"t","expected_schema":{},"submitted_output":{"a":1}`
	tests := []struct {
		name, body string
		field      string // the problem's field
		want       string // the member suggested; "" for none
	}{
		{"camelCase enforce_rules", `{` + base + `,"enforceRules":true}`, "enforceRules", "enforce_rules"},
		{"camelCase expected_schema", `{"task_id":"t","submitted_output":1,"expected_schema":{},"expectedSchema":{}}`, "expectedSchema", "expected_schema"},
		{"PascalCase", `{` + base + `,"EnforceRules":true}`, "EnforceRules", "enforce_rules"},
		{"upper case", `{` + base + `,"STRICT_CONTENT_CHECK":true}`, "STRICT_CONTENT_CHECK", "strict_content_check"},
		{"kebab-case", `{` + base + `,"enforce-rules":true}`, "enforce-rules", "enforce_rules"},
		{"initialism", `{` + base + `,"agentID":"a"}`, "agentID", "agent_id"},
		{"taskId", `{"expected_schema":{},"submitted_output":1,"taskId":"t"}`, "taskId", "task_id"},
		{"submittedOutput", `{"task_id":"t","expected_schema":{},"submittedOutput":1}`, "submittedOutput", "submitted_output"},
		{"one letter missing", `{"task_id":"t","submitted_output":1,"expected_schma":{}}`, "expected_schma", "expected_schema"},
		{"two letters swapped", `{` + base + `,"detial":"compact"}`, "detial", "detail"},
		{"singular", `{` + base + `,"rule":[]}`, "rule", "rules"},
		{"rule member", `{` + base + `,"rules":[{"type":"gte","field":"a","value":1,"ifPresent":true}]}`, "rules[0].ifPresent", "if_present"},
		{"rule member camelCase", `{` + base + `,"rules":[{"type":"lte","field":"a","otherField":"a"}]}`, "rules[0].otherField", "other_field"},
		{"bound member", `{` + base + `,"bounds":{"a":{"max":1,"maxx":2}}}`, `bounds["a"].maxx`, "max"},
		{"unrelated top-level", `{` + base + `,"colour":"red"}`, "colour", ""},
		{"unrelated rule member", `{` + base + `,"rules":[{"type":"gte","field":"a","value":1,"comment":"x"}]}`, "rules[0].comment", ""},
		{"long name", `{` + base + `,"` + strings.Repeat("enforce_rules", 1000) + `":true}`, "", ""},
	}
	v := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.DecodeRequest([]byte(tt.body))
			var ie *InvalidRequestError
			if !errors.As(err, &ie) {
				t.Fatalf("DecodeRequest = %v, want an invalid request", err)
			}
			var p *FieldProblem
			for i, f := range ie.Fields {
				if strings.HasPrefix(f.Problem, "is not a known") {
					p = &ie.Fields[i]
				}
			}
			if p == nil {
				t.Fatalf("no unknown-member problem in %+v", ie.Fields)
			}
			if tt.field != "" && p.Field != tt.field {
				t.Errorf("field = %q, want %q", p.Field, tt.field)
			}
			hint := "did you mean `" + tt.want + "`?"
			switch {
			case tt.want != "" && !strings.Contains(p.Fix, hint):
				t.Errorf("fix %q does not say %s", p.Fix, hint)
			case tt.want == "" && strings.Contains(p.Fix, "did you mean"):
				t.Errorf("fix %q suggests a member", p.Fix)
			case !strings.HasPrefix(p.Fix, "Remove it"):
				t.Errorf("fix %q does not start with Remove it", p.Fix)
			}
			if len(p.Fix) > 300 || strings.Contains(p.Fix, "rulesenforce") {
				t.Errorf("fix %q is long or echoes the member", p.Fix)
			}
		})
	}
}
