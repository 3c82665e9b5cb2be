package engine

import (
	"strings"
	"testing"
)

// TestStringifiedOutputHint: submitted_output sent as a string holding the
// JSON object or array the schema wants gets a schema:type hint saying to
// send the value itself; other type failures keep their plain hint.
func TestStringifiedOutputHint(t *testing.T) {
	tests := []struct {
		name, schema, output string
		want                 bool
	}{
		{"object in a string", `{"type":"object"}`, `"{\"total\": 5}"`, true},
		{"array in a string", `{"type":"array"}`, `" [1, 2] "`, true},
		{"either type", `{"type":["object","array"]}`, `"[1]"`, true},
		{"array in a string, object wanted", `{"type":"object"}`, `"[1]"`, false},
		{"not JSON", `{"type":"object"}`, `"{total: 5}"`, false},
		{"a plain string", `{"type":"object"}`, `"hello"`, false},
		{"a number in a string", `{"type":"number"}`, `"5"`, false},
		{"a real object", `{"type":"array"}`, `{"a":1}`, false},
	}
	v := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := v.DecodeRequest([]byte(`{"task_id":"t","expected_schema":` + tt.schema + `,"submitted_output":` + tt.output + `}`))
			if err != nil {
				t.Fatal(err)
			}
			out, err := v.Check(req, "")
			if err != nil {
				t.Fatal(err)
			}
			var typeFinding *Finding
			for i := range out.Findings {
				if out.Findings[i].Check == "schema:type" {
					typeFinding = &out.Findings[i]
				}
			}
			if typeFinding == nil {
				t.Fatalf("no schema:type finding in %+v", out.Findings)
			}
			got := strings.Contains(typeFinding.Expected, "not a string holding JSON") &&
				strings.Contains(typeFinding.Message, "send the JSON value itself")
			if got != tt.want {
				t.Errorf("hint %q / %q: says to send the value itself = %v, want %v", typeFinding.Expected, typeFinding.Message, got, tt.want)
			}
		})
	}
}
