package engine

import (
	"strings"
	"testing"
)

// TestKeywordTypoFlag: a schema keyword within two edits of a keyword of
// its draft is flagged (a warning, with a hint naming the keyword), and is
// no check: the counts are those of the same schema without it. x-
// members, annotations and words far from every keyword are not flagged.
func TestKeywordTypoFlag(t *testing.T) {
	const output = `{"name":"x","total":5}`
	tests := []struct {
		name, schema string
		want         map[string]string // keyword → suggestion
	}{
		{"requried", `{"type":"object","requried":["name"]}`, map[string]string{"requried": "required"}},
		{"minimun in properties", `{"properties":{"total":{"type":"number","minimun":10}}}`, map[string]string{"minimun": "minimum"}},
		{"additionalProperites", `{"properties":{"name":{"type":"string"}},"additionalProperites":false}`, map[string]string{"additionalProperites": "additionalProperties"}},
		{"draft-07 keyword", `{"$schema":"http://json-schema.org/draft-07/schema#","itemz":{"type":"string"}}`, map[string]string{"itemz": "items"}},
		{"x- extension", `{"type":"object","x-foo":1,"x-requried":true}`, nil},
		{"title and $comment", `{"type":"object","title":"Invoice","$comment":"ours","description":"d"}`, nil},
		{"unrelated words", `{"type":"object","owner":"billing","sourceSystem":"erp","unit":"EUR","notes":"n"}`, nil},
		{"a property named like a typo", `{"properties":{"requried":{"type":"string"}}}`, nil},
		{"enum values", `{"properties":{"name":{"enum":["minimun","x"]}}}`, nil},
	}
	v := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"task_id":"t","expected_schema":` + tt.schema + `,"submitted_output":` + output + `}`
			req, err := v.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			out, err := v.Check(req, "")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range out.Findings {
				if f.Check != CheckUnknownKeyword {
					continue
				}
				if f.Blocking || !f.Advisory {
					t.Errorf("%+v blocks or is not advisory", f)
				}
				kw := strings.TrimSuffix(strings.TrimPrefix(f.Found, "unknown keyword `"), "`")
				got[kw] = strings.TrimSuffix(strings.TrimPrefix(f.Expected, "did you mean `"), "`?")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("flagged %v, want %v", got, tt.want)
			}
			for kw, s := range tt.want {
				if got[kw] != s {
					t.Errorf("%s: suggestion %q, want %q", kw, got[kw], s)
				}
			}
			// Counts unchanged: the same schema with the typo removed counts alike.
			if len(tt.want) > 0 {
				clean := tt.schema
				for kw := range tt.want {
					clean = strings.Replace(clean, `"`+kw+`"`, `"x-`+kw+`"`, 1)
				}
				cleanReq, err := v.DecodeRequest([]byte(`{"task_id":"t","expected_schema":` + clean + `,"submitted_output":` + output + `}`))
				if err != nil {
					t.Fatal(err)
				}
				cleanOut, err := v.Check(cleanReq, "")
				if err != nil {
					t.Fatal(err)
				}
				if out.Schema != cleanOut.Schema || out.Integrity != cleanOut.Integrity || out.Overall != cleanOut.Overall || out.Pass != cleanOut.Pass {
					t.Errorf("with the typo %+v %+v %+v pass %v; without %+v %+v %+v pass %v",
						out.Schema, out.Integrity, out.Overall, out.Pass, cleanOut.Schema, cleanOut.Integrity, cleanOut.Overall, cleanOut.Pass)
				}
			}
		})
	}
}
