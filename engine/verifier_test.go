package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func checkBody(t *testing.T, v *Verifier, body string) (*Request, *Outcome) {
	t.Helper()
	req, err := v.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	out, err := v.Check(req, "")
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return req, out
}

// TestSpecExample is SPEC §3.1's worked example: 12 schema checks.
func TestSpecExample(t *testing.T) {
	body := `{"task_id":"t","expected_schema":{"type":"object","required":["items","total"],"properties":{"items":{"type":"array","items":{"type":"object","required":["id","price"],"properties":{"id":{"type":"string"},"price":{"type":"number"}}}},"total":{"type":"number"}}},
	"submitted_output":{"items":[{"id":"a","price":1},{"id":"b","price":2}],"total":3}}`
	_, out := checkBody(t, New(nil), body)
	if out.Schema.Total != 12 || out.Schema.Passed != 12 {
		t.Errorf("schema_compliance = %+v, want 12/12", out.Schema)
	}
}

// TestSchemaFindingMessages pins the sentence a schema finding carries: the
// evaluator's predicate after the location in the answer's `$` notation, and
// repeated failures that share one predicate still name their own paths.
func TestSchemaFindingMessages(t *testing.T) {
	tests := []struct {
		name, schema, output string
		want                 []string
	}{
		{"root", `{"type":"object"}`, `5`,
			[]string{"The root value must be of type object, but it is number 5."}},
		{"nested", `{"properties":{"a/b":{"items":{"minimum":1}}}}`, `{"a/b":[3,0]}`,
			[]string{"The value at $.a/b[1] must be at least 1, but it is number 0."}},
		{"repeated", `{"items":{"properties":{"q":{"exclusiveMinimum":0}}}}`, `[{"q":0},{"q":1},{"q":0}]`,
			[]string{"The value at $[0].q must be greater than 0, but it is number 0.",
				"The value at $[2].q must be greater than 0, but it is number 0."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"task_id":"t","expected_schema":%s,"submitted_output":%s}`, tc.schema, tc.output)
			_, out := checkBody(t, New(nil), body)
			var got []string
			for _, f := range out.Findings {
				if f.Source == SourceSchema {
					got = append(got, f.Message)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestBlocking checks SPEC §3.2: schema checks and bounds always block;
// rules block only with enforce_rules, content checks only with
// strict_content_check.
func TestBlocking(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"s":{"type":"string"}}}`
	tests := []struct {
		name          string
		output, extra string
		wantPass      bool
		wantBlocking  []string
		wantIntegrity [2]int // passed, total
		wantWarnings  int    // failed integrity checks that do not block
	}{
		{name: "clean", output: `{"a":1,"b":1,"s":"ok"}`, extra: `"rules":[{"type":"lte","field":"a","other_field":"b"}]`,
			wantPass: true, wantIntegrity: [2]int{3, 3}},
		{name: "rule warns", output: `{"a":2,"b":1,"s":"ok"}`, extra: `"rules":[{"type":"lte","field":"a","other_field":"b"}]`,
			wantPass: true, wantIntegrity: [2]int{2, 3}, wantWarnings: 1},
		{name: "rule blocks when enforced", output: `{"a":2,"b":1,"s":"ok"}`, extra: `"rules":[{"type":"lte","field":"a","other_field":"b"}],"enforce_rules":true`,
			wantPass: false, wantBlocking: []string{"consistency:lte"}, wantIntegrity: [2]int{2, 3}},
		{name: "placeholder warns", output: `{"a":1,"s":"TODO"}`,
			wantPass: true, wantIntegrity: [2]int{1, 2}, wantWarnings: 1},
		{name: "placeholder blocks when strict", output: `{"a":1,"s":"TODO"}`, extra: `"strict_content_check":true`,
			wantPass: false, wantBlocking: []string{"content:placeholder"}, wantIntegrity: [2]int{1, 2}},
		{name: "undeclared field warns", output: `{"a":1,"zz":1}`,
			wantPass: true, wantIntegrity: [2]int{0, 1}, wantWarnings: 1},
		{name: "undeclared field blocks when strict", output: `{"a":1,"zz":1}`, extra: `"strict_content_check":true`,
			wantPass: false, wantBlocking: []string{"content:undeclared_field"}, wantIntegrity: [2]int{0, 1}},
		{name: "bound always blocks", output: `{"a":5}`, extra: `"bounds":{"a":{"max":1}}`,
			wantPass: false, wantBlocking: []string{"bounds:range"}, wantIntegrity: [2]int{1, 2}},
		{name: "schema always blocks, rules still run", output: `{"a":"x","b":1}`, extra: `"rules":[{"type":"gte","field":"b","value":2}]`,
			wantPass: false, wantBlocking: []string{"schema:type"}, wantIntegrity: [2]int{2, 3}, wantWarnings: 1},
		{name: "skipped rule is not counted", output: `{"a":1}`, extra: `"rules":[{"type":"gte","field":"b","value":2,"if_present":true}]`,
			wantPass: true, wantIntegrity: [2]int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"task_id":"t","expected_schema":%s,"submitted_output":%s`, schema, tt.output)
			if tt.extra != "" {
				body += "," + tt.extra
			}
			req, out := checkBody(t, New(nil), body+"}")
			if out.Pass != tt.wantPass {
				t.Errorf("pass = %v, want %v (findings %+v)", out.Pass, tt.wantPass, out.Findings)
			}
			a := New(nil).NewAnswer(req, out, AnswerMeta{VerifiedAt: time.Unix(0, 0)})
			if got := strings.Join(a.Summary.BlockingChecks, ","); got != strings.Join(tt.wantBlocking, ",") {
				t.Errorf("blocking_checks = %q, want %q", got, strings.Join(tt.wantBlocking, ","))
			}
			if got := [2]int{out.Integrity.Passed, out.Integrity.Total}; got != tt.wantIntegrity {
				t.Errorf("integrity_checks = %v, want %v", got, tt.wantIntegrity)
			}
			warnings := 0
			for _, f := range a.Flags {
				if f.Severity == "warning" {
					warnings++
				}
			}
			if warnings != tt.wantWarnings {
				t.Errorf("warning flags = %d, want %d (%+v)", warnings, tt.wantWarnings, a.Flags)
			}
			if len(a.Errors) != len(a.ErrorsDetail) || (len(tt.wantBlocking) == 0) != (len(a.Errors) == 0) {
				t.Errorf("errors %v / errors_detail %v disagree with blocking_checks", a.Errors, a.ErrorsDetail)
			}
		})
	}
}

func TestListCaps(t *testing.T) {
	v := New(&Options{ListCap: 3})
	items := strings.TrimSuffix(strings.Repeat(`"TODO",`, 10), ",")
	req, out := checkBody(t, v, `{"task_id":"t","expected_schema":{"type":"array","items":{"type":"integer"}},"submitted_output":[`+items+`]}`)
	a := v.NewAnswer(req, out, AnswerMeta{})
	checks := []struct {
		name           string
		n              int
		total, omitted *int
		wantTotal      int
	}{
		{"errors", len(a.Errors), a.ErrorsTotal, a.ErrorsOmitted, 10},
		{"errors_detail", len(a.ErrorsDetail), a.ErrorsDetailTotal, a.ErrorsDetailOmit, 10},
		{"flags", len(a.Flags), a.FlagsTotal, a.FlagsOmitted, 10},
		{"hints", len(a.Hints), a.HintsTotal, a.HintsOmitted, 20},
	}
	for _, c := range checks {
		if c.n != 3 || *c.total != c.wantTotal || *c.omitted != c.wantTotal-3 {
			t.Errorf("%s: %d listed, total %d, omitted %d; want 3, %d, %d", c.name, c.n, *c.total, *c.omitted, c.wantTotal, c.wantTotal-3)
		}
	}
}

func TestCompactAnswerDropsLists(t *testing.T) {
	v := New(nil)
	req, out := checkBody(t, v, `{"task_id":"t","expected_schema":{"type":"string"},"submitted_output":1,"detail":"compact"}`)
	b, err := v.NewAnswer(req, out, AnswerMeta{}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"request_hash", "errors", "hints", "flags", "schema_compliance", "overall"} {
		if _, ok := keys[key]; ok {
			t.Errorf("compact answer has %s: %s", key, b)
		}
	}
	for _, key := range []string{"summary", "next_actions", "verification_id", "output_hash", "verify"} {
		if _, ok := keys[key]; !ok {
			t.Errorf("compact answer lacks %s: %s", key, b)
		}
	}
}

func TestSchemaProblemsAreInvalidRequests(t *testing.T) {
	tests := []struct{ name, schema, wantField string }{
		{"remote $ref", `{"$ref":"https://example.com/MARKER.json"}`, "expected_schema"},
		{"type not a string", `{"properties":{"a":{"type":5}}}`, "expected_schema.properties.a.type"},
		{"minimum not a number", `{"minimum":"x"}`, "expected_schema.minimum"},
		{"look-around pattern", `{"pattern":"(?=a)"}`, "expected_schema.pattern"},
		{"unknown draft", `{"$schema":"http://example.com/MARKER"}`, "expected_schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := New(nil)
			req, err := v.DecodeRequest([]byte(`{"task_id":"t","expected_schema":` + tt.schema + `,"submitted_output":1}`))
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Check(req, "")
			var inv *InvalidRequestError
			if !errors.As(err, &inv) || len(inv.Fields) == 0 {
				t.Fatalf("Check error = %v, want *InvalidRequestError", err)
			}
			f := inv.Fields[0]
			if !strings.HasPrefix(f.Field, tt.wantField) || f.Fix == "" {
				t.Errorf("field = %+v, want %s… with a fix", f, tt.wantField)
			}
			if strings.Contains(f.Problem+f.Fix, "MARKER") {
				t.Errorf("problem %+v echoes the schema", f)
			}
		})
	}
}

func TestSchemaCacheIsBounded(t *testing.T) {
	v := New(&Options{CacheSize: 2})
	for i := range 5 {
		req, err := v.DecodeRequest([]byte(fmt.Sprintf(`{"task_id":"t","expected_schema":{"maxLength":%d},"submitted_output":"x"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Check(req, fmt.Sprintf("hash-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.CachedSchemas(); n != 2 {
		t.Errorf("cached schemas = %d, want 2", n)
	}
}
