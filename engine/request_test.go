package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// marker is planted in bad requests; no error may quote it.
const marker = "MARKER_7f3a"

func TestDecodeRequestProblems(t *testing.T) {
	long := strings.Repeat("a", 201)
	tests := []struct {
		name      string
		body      string
		wantField string
	}{
		{"not an object", `["` + marker + `"]`, "body"},
		{"empty body", ``, "body"},
		{"not JSON", `{` + marker, "body"},
		{"malformed", `{"task_id":"` + marker, "task_id"},
		{"malformed member with odd name", `{"<` + marker + `>":tru`, "(member #1)"},
		{"trailing data", `{"task_id":"t"} {"` + marker + `":1}`, "body"},
		{"duplicate top-level key", `{"task_id":"t","task_id":"` + marker + `","expected_schema":{},"submitted_output":1}`, "body"},
		{"duplicate key in output", `{"task_id":"t","expected_schema":{},"submitted_output":{"a":"` + marker + `","a":2}}`, "submitted_output"},
		{"invalid UTF-8", "{\"task_id\":\"t\",\"expected_schema\":{},\"submitted_output\":\"\xff" + marker + "\"}", "submitted_output"},
		{"lone surrogate", `{"task_id":"t","expected_schema":{},"submitted_output":"\ud800` + marker + `"}`, "submitted_output"},
		{"integer past 2^53", `{"task_id":"t","expected_schema":{},"submitted_output":{"id":9007199254740993}}`, "submitted_output"},
		{"overflowing number", `{"task_id":"t","expected_schema":{},"submitted_output":1e999}`, "submitted_output"},
		{"too deep", `{"task_id":"t","expected_schema":{},"submitted_output":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "submitted_output"},
		{"missing task_id", `{"expected_schema":{},"submitted_output":1}`, "task_id"},
		{"missing expected_schema", `{"task_id":"t","submitted_output":1}`, "expected_schema"},
		{"missing submitted_output", `{"task_id":"t","expected_schema":{}}`, "submitted_output"},
		{"201-character task_id", `{"task_id":"` + long + `","expected_schema":{},"submitted_output":1}`, "task_id"},
		{"201-character agent_id", `{"task_id":"t","agent_id":"` + long + `","expected_schema":{},"submitted_output":1}`, "agent_id"},
		{"task_id not a string", `{"task_id":5,"expected_schema":{},"submitted_output":1}`, "task_id"},
		{"schema not a schema", `{"task_id":"t","expected_schema":"` + marker + `","submitted_output":1}`, "expected_schema"},
		{"unknown top-level field", `{"task_id":"t","expected_schema":{},"submitted_output":1,"enforce_rule":true}`, "enforce_rule"},
		{"unknown field with odd name", `{"task_id":"t","expected_schema":{},"submitted_output":1,"<` + marker + `>":true}`, "(member #1)"},
		{"case-folded field name", `{"TASK_ID":"t","task_id":"t","expected_schema":{},"submitted_output":1}`, "TASK_ID"},
		{"flag not a boolean", `{"task_id":"t","expected_schema":{},"submitted_output":1,"enforce_rules":"yes"}`, "enforce_rules"},
		{"bad detail", `{"task_id":"t","expected_schema":{},"submitted_output":1,"detail":"` + marker + `"}`, "detail"},
		{"unknown rule type", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"` + marker + `","field":"a"}]}`, "rules[0].type"},
		{"rule missing type", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"field":"a"}]}`, "rules[0].type"},
		{"rule with equals and equals_field", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals":1,"equals_field":"b"}]}`, "rules[0]"},
		{"rule with neither", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"gte","field":"a"}]}`, "rules[0]"},
		{"rule field of another type", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a","values":[1]}]}`, "rules[0].values"},
		{"rule unknown field", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a","toleranse":1}]}`, "rules[0].toleranse"},
		{"rule negative tolerance", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals":1,"tolerance":-1}]}`, "rules[0].tolerance"},
		{"rule bad path", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a..` + marker + `"}]}`, "rules[0].field"},
		{"rule index with a leading zero", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a[07]"}]}`, "rules[0].field"},
		{"rules not an array", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":{}}`, "rules"},
		{"bound without limits", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{}}}`, `bounds["a"]`},
		{"bound unknown field", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":1,"mix":2}}}`, `bounds["a"].mix`},
		{"bound min above max", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":2,"max":1}}}`, `bounds["a"]`},
		{"bound min date after max date", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":"2026-01-02","max":"2026-01-01T23:59:59Z"}}}`, `bounds["a"]`},
		{"bound bad date", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":"` + marker + `"}}}`, `bounds["a"].min`},
		{"bound mixed kinds", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":1,"max":"2026-01-01"}}}`, `bounds["a"]`},
		{"bound key with odd characters", `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a..` + marker + `":{"min":1}}}`, "bounds(entry #1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil).DecodeRequest([]byte(tt.body))
			var inv *InvalidRequestError
			if !errors.As(err, &inv) {
				t.Fatalf("DecodeRequest error = %v, want *InvalidRequestError", err)
			}
			found := false
			for _, f := range inv.Fields {
				if f.Field == tt.wantField {
					found = true
				}
				if f.Problem == "" || f.Fix == "" {
					t.Errorf("problem %+v lacks a problem or a fix", f)
				}
				if strings.Contains(f.Field+f.Problem+f.Fix, marker) {
					t.Errorf("problem %+v echoes the input", f)
				}
				// A message reads "<field> <problem>": the problem must not
				// name its field again ("body the body is not valid JSON").
				if first, _, _ := strings.Cut(f.Problem, " "); first == f.Field || first == "the" {
					t.Errorf("problem %+v repeats its field: it reads %q", f, f.Field+" "+f.Problem)
				}
			}
			if !found {
				t.Errorf("fields = %+v, want one naming %q", inv.Fields, tt.wantField)
			}
		})
	}
}

func TestDecodeRequestReportsAllProblems(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{`{"task_id":"","expected_schema":1,"rules":[{"type":"x","field":"a"}],"detail":"big"}`,
			[]string{"task_id", "expected_schema", "submitted_output", "detail", "rules[0].type"}},
		{`{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":"x","max":true,"if_present":1}},"rules":[{"type":"unique","field":"a","if_present":1}]}`,
			[]string{`bounds["a"].min`, `bounds["a"].max`, `bounds["a"].if_present`, "rules[0].if_present"}},
	}
	for _, tt := range tests {
		_, err := New(nil).DecodeRequest([]byte(tt.body))
		var inv *InvalidRequestError
		if !errors.As(err, &inv) {
			t.Fatalf("DecodeRequest error = %v, want *InvalidRequestError", err)
		}
		for _, w := range tt.want {
			if !slices.Contains(inv.FieldNames(), w) {
				t.Errorf("fields %v lack %s", inv.FieldNames(), w)
			}
		}
		if n := len(inv.Fields); n != len(tt.want) {
			t.Errorf("%d problems listed, want %d: %+v", n, len(tt.want), inv.Fields)
		}
	}
}

func TestDecodeRequestDefaults(t *testing.T) {
	req, err := New(nil).DecodeRequest([]byte(`{"task_id":"t","expected_schema":{},"submitted_output":null,"rules":[{"type":"unique","field":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.Detail != DetailFull || req.EnforceRules || req.StrictContentCheck || req.AgentID != nil || req.SubmittedOutput != nil {
		t.Errorf("defaults not applied: %+v", req)
	}
	if r := req.Rules[0]; r.Tolerance != DefaultTolerance || r.IfPresent {
		t.Errorf("rule defaults not applied: %+v", r)
	}
}

// manyMembers is n members "k0":1 … "k<n-1>":1, comma-separated.
func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	return b.String()
}

// TestDecodeRequestCapsProblems checks that a request of many problems
// lists the first MaxReportedProblems and counts the rest, wherever they
// are: unknown top-level fields, unknown rule or bound fields, bad rules.
func TestDecodeRequestCapsProblems(t *testing.T) {
	const valid = `"task_id":"t","expected_schema":{},"submitted_output":1`
	badRules := strings.TrimSuffix(strings.Repeat(`{"type":"x","field":"a"},`, 50), ",")
	for _, tt := range []struct {
		name      string
		body      string
		total     int    // problems found
		wantFirst string // the first field named
	}{
		{"20 unknown fields: all listed", `{` + valid + `,` + manyMembers(20) + `}`, 20, "k0"},
		{"21 unknown fields", `{` + valid + `,` + manyMembers(21) + `}`, 21, "k0"},
		{"5,000 unknown fields", `{` + valid + `,` + manyMembers(5000) + `}`, 5000, "k0"},
		{"5,000 unknown fields and a bad task_id", `{"task_id":1,"expected_schema":{},"submitted_output":1,` + manyMembers(5000) + `}`, 5001, "k0"},
		{"5,000 unknown rule fields", `{` + valid + `,"rules":[{"type":"unique","field":"a",` + manyMembers(5000) + `}]}`, 5000, "rules[0].k0"},
		{"5,000 unknown bound fields", `{` + valid + `,"bounds":{"a":{"min":1,` + manyMembers(5000) + `}}}`, 5000, `bounds["a"].k0`},
		{"50 bad rules", `{` + valid + `,"rules":[` + badRules + `]}`, 50, "rules[0].type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil).DecodeRequest([]byte(tt.body))
			var inv *InvalidRequestError
			if !errors.As(err, &inv) {
				t.Fatalf("DecodeRequest error = %v, want *InvalidRequestError", err)
			}
			listed := min(tt.total, MaxReportedProblems)
			if len(inv.Fields) != listed || inv.Omitted != tt.total-listed {
				t.Errorf("%d problems listed and %d omitted, want %d and %d", len(inv.Fields), inv.Omitted, listed, tt.total-listed)
			}
			if len(inv.Fields) > 0 && inv.Fields[0].Field != tt.wantFirst {
				t.Errorf("first problem %+v, want one naming %q", inv.Fields[0], tt.wantFirst)
			}
		})
	}
}

// TestDecodeRequestMalformedWording: a body that is not I-JSON is refused
// with its first problem, named at the member whose value holds it (or the
// body), in the words the jsontext splitter used to give: the same field,
// predicate and byte offset. Only a number outside I-JSON before a syntax
// error is now named for itself, not for the syntax error after it, and at
// the member that holds it, not the body; and a name missing after a comma
// is placed where it is missing.
func TestDecodeRequestMalformedWording(t *testing.T) {
	for _, tt := range []struct{ body, field, problem string }{
		{"", "body", "is empty or truncated JSON"},
		{"  ", "body", "is empty or truncated JSON"},
		{"{\"task_id\":\"MARKER", "task_id", "is empty or truncated JSON"},
		{"{MARKER", "body", "is not valid JSON (syntax error at byte 1)"},
		{"{\"task_id\":\"t\",\"task_id\":\"u\"}", "body", "has a duplicate object key (I-JSON forbids it)"},
		{"{\"a\":1} x", "body", "has data after the JSON object"},
		{"[1]", "body", "must be a JSON object"},
		{"\"x\"", "body", "must be a JSON object"},
		{"{\"submitted_output\":[[1}}", "submitted_output", "is not valid JSON (syntax error at byte 23)"},
		{"{\"a\":1,}", "body", "is not valid JSON (syntax error at byte 7)"}, // jsontext named the comma, 6
		{"{\"a\" 1}", "a", "is not valid JSON (syntax error at byte 5)"},
		{"{\"submitted_output\":{\"a\":1,\"a\":2}", "submitted_output", "has a duplicate object key (I-JSON forbids it)"},
		{"{\"submitted_output\":[\"\xff\",}", "submitted_output", "has invalid UTF-8 at byte 22"},
		{"{\"submitted_output\":[\"\xff\"]}", "submitted_output", "has invalid UTF-8 at byte 22"},
		{"{\"submitted_output\":{\"a\":1,\"a\":2}}", "submitted_output", "has a duplicate object key (I-JSON forbids it)"},
		{"{\"submitted_output\":\"\\ud800\"}", "submitted_output", "is not valid JSON (syntax error at byte 21)"},
		{"{\"submitted_output\":[\"\\ud800\",}", "submitted_output", "is not valid JSON (syntax error at byte 22)"},
		{"{\"submitted_output\":1e999}", "submitted_output", "is not I-JSON: has a number outside the I-JSON range"},
		{"{\"submitted_output\":[1e999,}", "submitted_output", "is not I-JSON: has a number outside the I-JSON range at byte 26"},
		{"{\"t\xff\":1}", "body", "has invalid UTF-8 at byte 3"},
		{"{\"<x>\":tru", "(member #1)", "is empty or truncated JSON"},
		{"{\"a\":{\"b\":1,\"b\":2},\"c\" 1}", "a", "has a duplicate object key (I-JSON forbids it)"},
		{"{\"task_id\":\"t\"", "body", "is empty or truncated JSON"},
		{"{\"task_id\":\"t\",", "body", "is empty or truncated JSON"},
		{"{", "body", "is empty or truncated JSON"},
		{"{\"submitted_output\": \n [1,,2]}", "submitted_output", "is not valid JSON (syntax error at byte 26)"},
		{"{\"a\":1e999", "a", "is not I-JSON: has a number outside the I-JSON range at byte 10"},
		{"{\"a\":1e999,\"b\":}", "a", "is not I-JSON: has a number outside the I-JSON range at byte 10"},
		{"{\"a\":{\"b\":1e999}", "a", "is not I-JSON: has a number outside the I-JSON range at byte 15"},
		{"{\"a\":1,\"b\"", "b", "is empty or truncated JSON"},
		{"{\"a\":1,\"a\":1e999}", "body", "has a duplicate object key (I-JSON forbids it)"},
		{"{\"a\":1e999,\"a\":1}", "body", "has a duplicate object key (I-JSON forbids it)"},
		{"{\"bounds\":1e999,\"submitted_output\":\"\\ud800\"}", "bounds", "is not I-JSON: has a number outside the I-JSON range"},
		{"[1", "body", "must be a JSON object"},
		{"xyz", "body", "is not valid JSON (syntax error at byte 0)"},
		{"{\"a\":1}}", "body", "has data after the JSON object"},
	} {
		_, err := New(nil).DecodeRequest([]byte(tt.body))
		var inv *InvalidRequestError
		if !errors.As(err, &inv) {
			t.Fatalf("DecodeRequest(%q) error = %v, want *InvalidRequestError", tt.body, err)
		}
		if f := inv.Fields[0]; f.Field != tt.field || f.Problem != tt.problem {
			t.Errorf("DecodeRequest(%q) = %s %q, want %s %q", tt.body, f.Field, f.Problem, tt.field, tt.problem)
		}
	}
}

// TestDecodeRequestNestedTooDeeply checks that nesting past the depth limit
// is reported as such, with the limit, however deep it goes: 100,000
// levels used to be "not valid JSON", because jsontext gives up at 10,000
// with a syntax error before the limit is checked.
func TestDecodeRequestNestedTooDeeply(t *testing.T) {
	const deep = 100_000
	arrays := strings.Repeat("[", deep) + strings.Repeat("]", deep)
	objects := strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep)
	request := func(output string) string {
		return `{"task_id":"t","expected_schema":{},"submitted_output":` + output + `}`
	}
	for _, tt := range []struct {
		name, body         string
		field, wantProblem string
	}{
		{"100k-deep array output", request(arrays), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep object output", request(objects), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep unclosed output", request(strings.Repeat("[", deep)), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep string-laden output", request(strings.Repeat(`["]\"",`, deep) + "1" + strings.Repeat("]", deep)), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"200-deep output", request(strings.Repeat("[", 200) + strings.Repeat("]", 200)), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep schema", `{"task_id":"t","expected_schema":` + objects + `,"submitted_output":1}`, "expected_schema", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep unknown member", `{"a":` + objects + `}`, "a", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep object body", objects, "a", "is nested too deeply: the limit is 127 levels"},
		{"100k-deep array body", arrays, "body", "must be a JSON object (and it is nested too deeply: the limit is 128 levels)"},
		{"shallow but malformed: not valid JSON", request(`[[1}`), "submitted_output", "is not valid JSON (syntax error at byte 58)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil).DecodeRequest([]byte(tt.body))
			var inv *InvalidRequestError
			if !errors.As(err, &inv) || len(inv.Fields) != 1 {
				t.Fatalf("DecodeRequest error = %v, want *InvalidRequestError with one problem", err)
			}
			if f := inv.Fields[0]; f.Field != tt.field || f.Problem != tt.wantProblem {
				t.Errorf("problem %+v, want %s %q", f, tt.field, tt.wantProblem)
			}
		})
	}
}
