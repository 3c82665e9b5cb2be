package engine

import (
	"fmt"
	"strings"
	"testing"
)

// decodeRuleT decodes one rule object through the request decoder.
func decodeRuleT(t *testing.T, rule string) Rule {
	t.Helper()
	req, err := New(nil).DecodeRequest([]byte(fmt.Sprintf(`{"task_id":"t","expected_schema":true,"submitted_output":null,"rules":[%s]}`, rule)))
	if err != nil {
		t.Fatalf("rule %s: %v", rule, err)
	}
	return req.Rules[0]
}

func TestRules(t *testing.T) {
	out := `{"total":135,"items":[{"id":"a","qty":2,"line":100},{"id":"b","qty":0,"line":29.5}],
	        "tags":["x","y","x"],"allowed":["a","b","c"],"name":"n","nested":[[1,2],[3]],"empty":[],
	        "start":"2026-01-01","totals":[1,2],"zeros":[0,-0.0],"kinds":[1,"1",true,"true",null,"null",[1],"[1]",{"1":1}],
	        "vals":[[1,{"a":1,"b":[true,null,"\u00e9"]}],[1.0,{"b":[true,null,"é"],"a":1e0}]]}`
	doc := mustDecode(t, out)
	tests := []struct {
		name      string
		rule      string
		wantFail  bool
		skipped   bool
		wantFound string // substring of Found when failing
	}{
		{name: "sum_equals holds", rule: `{"type":"sum_equals","field":"items[].line","equals":129.5}`},
		{name: "sum_equals vs field fails", rule: `{"type":"sum_equals","field":"items[].line","equals_field":"total"}`, wantFail: true, wantFound: "sum 129.5"},
		{name: "sum_equals within tolerance", rule: `{"type":"sum_equals","field":"items[].line","equals":130,"tolerance":0.5}`},
		{name: "sum_equals just outside tolerance", rule: `{"type":"sum_equals","field":"items[].line","equals":130,"tolerance":0.49}`, wantFail: true},
		{name: "sum_equals over nested fan-out", rule: `{"type":"sum_equals","field":"nested[][]","equals":6}`},
		{name: "sum_equals wrong type", rule: `{"type":"sum_equals","field":"items[].id","equals":1}`, wantFail: true, wantFound: "string"},
		{name: "sum_equals target missing", rule: `{"type":"sum_equals","field":"items[].line","equals_field":"nope"}`, wantFail: true, wantFound: "no value"},
		{name: "sum_equals target not single", rule: `{"type":"sum_equals","field":"items[].line","equals_field":"totals[]"}`, wantFail: true, wantFound: "2 values"},
		{name: "missing field fails", rule: `{"type":"sum_equals","field":"nope[]","equals":0}`, wantFail: true, wantFound: "no value"},
		{name: "empty array fails", rule: `{"type":"unique","field":"empty[]"}`, wantFail: true, wantFound: "no value"},
		{name: "missing field if_present skipped", rule: `{"type":"gte","field":"nope","value":1,"if_present":true}`, skipped: true},
		{name: "gte holds", rule: `{"type":"gte","field":"items[].qty","value":0}`},
		{name: "gte fails", rule: `{"type":"gte","field":"items[].qty","value":1}`, wantFail: true, wantFound: "0"},
		{name: "gte vs other_field", rule: `{"type":"gte","field":"total","other_field":"items[0].line"}`},
		{name: "lte holds", rule: `{"type":"lte","field":"items[].line","other_field":"total"}`},
		{name: "lte fails", rule: `{"type":"lte","field":"items[].qty","value":1}`, wantFail: true, wantFound: "2"},
		{name: "lte wrong type", rule: `{"type":"lte","field":"name","value":1}`, wantFail: true, wantFound: "string"},
		{name: "exists_in values holds", rule: `{"type":"exists_in","field":"items[].id","values":["a","b"]}`},
		{name: "exists_in in_field holds", rule: `{"type":"exists_in","field":"items[].id","in_field":"allowed[]"}`},
		{name: "exists_in fails", rule: `{"type":"exists_in","field":"tags[]","in_field":"allowed[]"}`, wantFail: true, wantFound: `string "x"`},
		{name: "exists_in JSON equality of numbers", rule: `{"type":"exists_in","field":"total","values":[135.0]}`},
		{name: "exists_in JSON equality of nested values", rule: `{"type":"exists_in","field":"vals[0]","values":[[10e-1,{"b":[true,null,"é"],"a":1}]]}`},
		{name: "unique JSON equality of nested values", rule: `{"type":"unique","field":"vals[]"}`, wantFail: true, wantFound: "array of 2 items"},
		{name: "unique -0 equals 0", rule: `{"type":"unique","field":"zeros[]"}`, wantFail: true, wantFound: "-0.0"},
		{name: "unique tells kinds apart", rule: `{"type":"unique","field":"kinds[]"}`},
		{name: "unique holds", rule: `{"type":"unique","field":"items[].id"}`},
		{name: "unique fails", rule: `{"type":"unique","field":"tags[]"}`, wantFail: true, wantFound: `string "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decodeRuleT(t, tt.rule)
			f, counted := checkRule(&r, doc, unlimited())
			if counted == tt.skipped {
				t.Fatalf("counted = %v, want %v", counted, !tt.skipped)
			}
			if (f != nil) != tt.wantFail {
				t.Fatalf("checkRule failed = %v (%+v), want %v", f != nil, f, tt.wantFail)
			}
			if f != nil {
				if !strings.Contains(f.Found, tt.wantFound) {
					t.Errorf("Found = %q, want it to contain %q", f.Found, tt.wantFound)
				}
				if f.Check != "consistency:"+r.Type || !strings.HasPrefix(f.Path, "$") || f.Message == "" {
					t.Errorf("finding %+v lacks check, path or message", f)
				}
			}
		})
	}
}

func TestBounds(t *testing.T) {
	doc := mustDecode(t, `{"price":[5,50,500],"due":"2026-03-01","at":"2026-03-01T10:00:00+02:00","name":"x","n":7}`)
	tests := []struct {
		name     string
		bounds   string
		wantFail bool
		skipped  bool
	}{
		{name: "numbers in range", bounds: `{"price[]":{"min":0,"max":1000}}`},
		{name: "numbers out of range", bounds: `{"price[]":{"max":100}}`, wantFail: true},
		{name: "min only", bounds: `{"n":{"min":7}}`},
		{name: "min only fails", bounds: `{"n":{"min":7.5}}`, wantFail: true},
		{name: "date in range", bounds: `{"due":{"min":"2026-01-01","max":"2026-12-31"}}`},
		{name: "date out of range", bounds: `{"due":{"max":"2026-02-28"}}`, wantFail: true},
		{name: "date-time with offset", bounds: `{"at":{"max":"2026-03-01T08:00:00Z"}}`},
		{name: "date-time after limit", bounds: `{"at":{"max":"2026-03-01T07:59:59Z"}}`, wantFail: true},
		{name: "wrong kind string vs number", bounds: `{"name":{"min":0}}`, wantFail: true},
		{name: "wrong kind number vs date", bounds: `{"n":{"min":"2026-01-01"}}`, wantFail: true},
		{name: "missing fails", bounds: `{"nope":{"min":0}}`, wantFail: true},
		{name: "missing if_present skipped", bounds: `{"nope":{"min":0,"if_present":true}}`, skipped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := New(nil).DecodeRequest([]byte(`{"task_id":"t","expected_schema":true,"submitted_output":null,"bounds":` + tt.bounds + `}`))
			if err != nil {
				t.Fatal(err)
			}
			f, counted := checkBound(&req.Bounds[0], doc, unlimited())
			if counted == tt.skipped {
				t.Fatalf("counted = %v, want %v", counted, !tt.skipped)
			}
			if (f != nil) != tt.wantFail {
				t.Fatalf("checkBound failed = %v (%+v), want %v", f != nil, f, tt.wantFail)
			}
			if f != nil && (f.Check != CheckBounds || !f.Blocking) {
				t.Errorf("finding %+v: want a blocking bounds:range", f)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	for _, s := range []string{"", "  ", "TODO", "tbd", "N/A", "xxx", "XXXX", "...", "…", "Lorem ipsum dolor", "<insert name>", "{{name}}", "[placeholder]", "[Insert address]"} {
		if placeholderKind(s) == "" {
			t.Errorf("placeholderKind(%q) = \"\", want a placeholder", s)
		}
	}
	for _, s := range []string{"Acme Ltd", "x", "todo list app", "N/A pricing applies", "2026-01-01", "{{a}} and b", strings.Repeat("a", 500)} {
		if k := placeholderKind(s); k != "" {
			t.Errorf("placeholderKind(%q) = %q, want real content", s, k)
		}
	}
}
