package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var reportCases = []struct{ name, schema, instance string }{
	{"type", `{"properties":{"qty":{"type":"integer"}}}`, `{"qty":"5"}`},
	{"type list", `{"type":["string","null"]}`, `1.5`},
	{"enum", `{"enum":["EUR","USD",1,null]}`, `"eur"`},
	{"const", `{"const":{"v":1}}`, `{"v":2}`},
	{"multipleOf", `{"multipleOf":0.01}`, `1.005`},
	{"bounds", `{"minimum":1,"maximum":0,"exclusiveMinimum":5,"exclusiveMaximum":-1}`, `3`},
	{"minLength counts code points", `{"minLength":4,"maxLength":1}`, `"héé"`},
	{"pattern", `{"properties":{"sku":{"pattern":"^[A-Z]{3}-[0-9]{5}$"}}}`, `{"sku":"abc-1"}`},
	{"format", `{"format":"date-time"}`, `"2024-13-01T00:00:00Z"`},
	{"long string is cut", `{"maxLength":3}`, `"` + strings.Repeat("x", 100) + `"`},
	{"array items", `{"minItems":3,"maxItems":1,"uniqueItems":true}`, `[{"a":1},{"a":1.0}]`},
	{"contains", `{"contains":{"type":"string"},"minContains":2,"maxContains":0}`, `["a",1]`},
	{"object counts", `{"minProperties":3,"maxProperties":1}`, `{"a":1,"b":2}`},
	{"required", `{"required":["id","price","qty"]}`, `{"qty":1}`},
	{"dependentRequired", `{"dependentRequired":{"card":["cvc","expiry"]}}`, `{"card":"4111","expiry":"12/30"}`},
	{"propertyNames", `{"propertyNames":{"pattern":"^[a-z]+$"}}`, `{"ok":1,"Bad":2,"also bad":3}`},
	{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`},
	{"oneOf none", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `[]`},
	{"oneOf two", `{"oneOf":[{"type":"number"},{"minimum":0}]}`, `1`},
	{"not", `{"not":{"type":"null"}}`, `null`},
	{"false schema", `{"properties":{"secret":false}}`, `{"secret":"x"}`},
	{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"z":2,"b":3}`},
	{"unevaluatedProperties false", `{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1,"b":2}`},
	{"items false", `{"prefixItems":[{"type":"string"}],"items":false}`, `["a","b","c"]`},
	{"unevaluatedItems false", `{"prefixItems":[{}],"unevaluatedItems":false}`, `[1,2]`},
	{"keyword location through $ref", `{"$defs":{"line":{"properties":{"qty":{"minimum":1}}}},"properties":{"lines":{"items":{"$ref":"#/$defs/line"}}}}`, `{"lines":[{"qty":1},{"qty":0}]}`},
	{"escaped pointers", `{"properties":{"a/b":{"properties":{"c~d":{"type":"string"}}}}}`, `{"a/b":{"c~d":1}}`},
	{"described objects", `{"properties":{"a":{"properties":{"x":{}},"patternProperties":{"^p":{}}},"b":{"type":"object"}}}`, `{"a":{"x":1,"p1":2,"q":3},"b":{"z":1},"c":4}`},
	{"described merges subschemas", `{"allOf":[{"properties":{"a":{}}},{"properties":{"b":{}}}],"properties":{"o":{"properties":{"k":{}}}},"additionalProperties":{"properties":{"m":{}}}}`, `{"a":1,"b":2,"o":{"k":1,"j":2},"p":{"m":1,"n":2},"q":{"m":1}}`},
	{"described by the matching branch only", `{"anyOf":[{"required":["kind"],"properties":{"kind":{"const":"a"},"x":{}}},{"properties":{"y":{}}}]}`, `{"kind":"b","y":1}`},
	{"described array items merge by index", `{"allOf":[{"items":{"properties":{"a":{}}}},{"items":{"properties":{"b":{}}}}],"properties":{"x/~y":{"items":{"properties":{"k":{}}}}}}`, `[{"a":1,"b":2,"c":3},{"a":1},{"d":4}]`},
	{"described items under an escaped key", `{"properties":{"x/~y":{"items":{"properties":{"k":{}}}}}}`, `{"x/~y":[{"k":1},{"k":1,"z":2}]}`},
	{"map of objects in sorted order", `{"additionalProperties":{"properties":{"n":{"type":"integer"}}}}`, `{"k3":{"n":"x"},"k1":{"n":"y"},"k2":{"n":1,"extra":1}}`},
}

func renderResult(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "valid=%v passed=%d total=%d\n", res.Valid, res.Passed, res.Total)
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "failure: keyword=%s path=%q at=%q\n  expected: %s\n  found: %s\n  message: %s\n",
			f.Keyword, f.InstancePath, f.KeywordLocation, f.Expected, f.Found, f.Sentence())
	}
	fmt.Fprintf(&b, "described: %d\n", res.Described)
	for _, d := range res.Undeclared {
		fmt.Fprintf(&b, "undeclared: %q %q\n", d.InstancePath, d.Undeclared)
	}
	return b.String()
}

// TestReports pins what failures and described objects look like
// (testdata/reports.golden; refresh with -update).
func TestReports(t *testing.T) {
	var b strings.Builder
	for _, c := range reportCases {
		res := evaluate(t, c.schema, c.instance)
		fmt.Fprintf(&b, "== %s\nschema: %s\ninstance: %s\n%s\n", c.name, c.schema, c.instance, renderResult(res))
		for i := 0; i < 20; i++ { // map iteration order must not leak into the result
			if again := renderResult(evaluate(t, c.schema, c.instance)); again != renderResult(res) {
				t.Fatalf("%s: result differs between runs:\n%s\nvs\n%s", c.name, renderResult(res), again)
			}
		}
	}
	golden := filepath.Join("testdata", "reports.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("reports differ from %s (-want +got):\n%s", golden, diff)
	}
}

// TestKeywordNames keeps kwNames complete: every reported keyword ID has its
// name, and names are unique.
func TestKeywordNames(t *testing.T) {
	if len(kwNames) != int(kwLast)+1 {
		t.Fatalf("kwNames has %d entries, want %d", len(kwNames), kwLast+1)
	}
	seen := map[string]kwID{}
	for k := kwFalse; k <= kwLast; k++ {
		name := k.String()
		if name == "" {
			t.Errorf("keyword %d has no name", k)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("keywords %d and %d are both named %q", prev, k, name)
		}
		seen[name] = k
	}
}

// TestReleaseKeepsNoInstance checks that an evaluator going back to the pool
// holds nothing of the instance, not even in records a discarded anyOf
// branch left past their slices' lengths.
func TestReleaseKeepsNoInstance(t *testing.T) {
	s, err := Compile(mustDecode(t, `{"anyOf":[
		{"properties":{"o":{"properties":{"k":{}}},"z":{"type":"string"}}},
		{}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &evaluator{}
	e.reset(s)
	res, err := e.run(s.root, mustDecode(t, `{"o":{"k":1,"extra":2},"z":1}`))
	if err != nil || !res.Valid {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if cap(e.described) == 0 {
		t.Fatal("the discarded branch described nothing; the test no longer exercises a rollback")
	}
	e.release()
	for i, d := range e.described[:cap(e.described)] {
		if d.undeclared != nil {
			t.Errorf("described[%d] still holds %q", i, d.undeclared)
		}
	}
	if e.last.v != nil {
		t.Errorf("the last failure still holds %v", e.last.v)
	}
	if cap(e.pend) == 0 {
		t.Fatal("no value waited for object's ordered pass; the test no longer exercises it")
	}
	for i, p := range e.pend[:cap(e.pend)] {
		if p.v != nil {
			t.Errorf("pend[%d] still holds %v", i, p.v)
		}
	}

	// A failure that names the missing properties drops the names too.
	s, err = Compile(mustDecode(t, `{"required":["q"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.reset(s)
	if res, err := e.run(s.root, mustDecode(t, `{"o":1}`)); err != nil || res.Valid || e.last.names == nil {
		t.Fatalf("run: %v, %+v", err, res)
	}
	e.release()
	if r := e.last; r.v != nil || r.names != nil {
		t.Errorf("the last failure still holds %v, %q", r.v, r.names)
	}
}

// TestSharedReportsMatchFresh holds the sharing of formatted failures
// (report's sameReport) to formatting each one afresh: over every case of
// the suite's required tests and documents built to repeat failures, each
// failure's strings must equal those of its own formatting.
func TestSharedReportsMatchFresh(t *testing.T) {
	type doc struct {
		name         string
		schema, data any
		draft        Draft
		share        *bool // whether some failure must share its strings (nil: either)
	}
	var docs []doc
	for _, d := range []struct {
		name  string
		draft Draft
	}{{"draft2020-12", Draft2020}, {"draft7", Draft7}} {
		for _, path := range suiteFiles(t, filepath.Join(suiteDir, "tests", d.name)) {
			for _, c := range readSuiteFile(t, path, filepath.Base(path)) {
				docs = append(docs, doc{name: d.name + " " + c.id(), schema: c.schema, data: c.data, draft: d.draft})
			}
		}
	}
	yes, no := true, false
	repeated := []struct {
		name, schema, data string
		share              *bool
	}{
		{"same mistake down a list", `{"items":{"properties":{"q":{"exclusiveMinimum":0}}}}`,
			`[{"q":0},{"q":0},{"q":0.0},{"q":-1},{"q":0}]`, &yes},
		{"two mistakes in turn", `{"items":{"properties":{"q":{"exclusiveMinimum":0},"s":{"type":"string"}}}}`,
			`[{"q":0,"s":1},{"q":0,"s":1},{"q":0.0,"s":true},{"q":-1,"s":1},{"q":0,"s":"ok"}]`, nil},
		{"lengths and enums", `{"items":{"maxLength":2,"enum":["ab","cd"]}}`, `["abc","abc","héé","abc","ab"]`, nil},
		{"equal values, other schemas", `{"properties":{"a":{"pattern":"^x"},"b":{"pattern":"^y"},"c":{"pattern":"^x"}}}`,
			`{"a":"zz","b":"zz","c":"zz"}`, &no},
		{"names are never shared", `{"items":{"required":["a","b"]}}`, `[{},{},{"a":1},{}]`, &no},
	}
	for _, r := range repeated {
		docs = append(docs, doc{name: r.name, schema: mustDecode(t, r.schema), data: mustDecode(t, r.data), draft: Draft2020, share: r.share})
	}
	docs = append(docs, doc{name: "bench invalid50", schema: readBenchDoc(t, "invoice.schema.json"),
		data: readBenchDoc(t, "invoice.invalid50.json"), draft: Draft2020, share: &yes})

	reg, err := suiteRegistry()
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, d := range docs {
		s, err := Compile(d.schema, &Options{Registry: reg, DefaultDraft: d.draft})
		if err != nil {
			continue // the suite's invalid-schema cases
		}
		res, err := s.Evaluate(d.data)
		if err != nil {
			continue
		}
		shareReports = false
		fresh, err := s.Evaluate(d.data)
		shareReports = true
		if err != nil || len(fresh.Failures) != len(res.Failures) {
			t.Fatalf("%s: formatted afresh: %v, %d failures, want %d", d.name, err, len(fresh.Failures), len(res.Failures))
		}
		sharedHere := 0
		for i, got := range res.Failures {
			if i > 0 && got.Report == res.Failures[i-1].Report {
				sharedHere++ // its report is an earlier failure's
			}
			if want := fresh.Failures[i]; got.InstancePath != want.InstancePath || *got.Report != *want.Report {
				t.Errorf("%s: failure %d at %s reads %+v, formatted afresh %+v", d.name, i, got.InstancePath, *got.Report, *want.Report)
			}
		}
		for i := 1; i < len(fresh.Failures); i++ {
			if fresh.Failures[i].Report == fresh.Failures[i-1].Report {
				t.Fatalf("%s: failures %d and %d share a Report with sharing off", d.name, i-1, i)
			}
		}
		if d.share != nil && *d.share != (sharedHere > 0) {
			t.Errorf("%s: %d failures shared their strings, want sharing %v", d.name, sharedHere, *d.share)
		}
		shared += sharedHere
	}
	t.Logf("%d documents, %d failures that shared their strings", len(docs), shared)
}

// TestInstancePaths checks failures' RFC 6901 instance paths: indices of
// every width, keys escaped ('~' as ~0, '/' as ~1) whether the schema names
// them (properties) or not (additionalProperties, patternProperties), and
// paths sharing a built ancestor, in evaluation order.
func TestInstancePaths(t *testing.T) {
	long := make([]any, 12346)
	for i := range long {
		long[i] = json.Number("0")
	}
	for _, i := range []int{0, 9, 10, 99, 100, 12345} {
		long[i] = "x"
	}
	cases := []struct {
		name, schema string
		inst         any
		want         []string
	}{
		{"indices", `{"items":{"type":"integer"}}`, long, []string{"/0", "/9", "/10", "/99", "/100", "/12345"}},
		{"declared keys", `{"properties":{"a/b":{"type":"string"},"m~n":{"type":"string"},"~/~":{"type":"string"},"p":{"type":"string"}}}`,
			map[string]any{"a/b": json.Number("1"), "m~n": json.Number("2"), "~/~": json.Number("3"), "p": json.Number("4")}, []string{"/a~1b", "/m~0n", "/p", "/~0~1~0"}},
		{"undeclared keys", `{"additionalProperties":{"type":"string"}}`,
			map[string]any{"a/b": json.Number("1"), "m~n": json.Number("2"), "": json.Number("3")}, []string{"/", "/a~1b", "/m~0n"}},
		{"pattern keys", `{"patternProperties":{"^x":{"type":"string"}}}`,
			map[string]any{"x/1": json.Number("1"), "x~": json.Number("2")}, []string{"/x~11", "/x~0"}},
		{"shared ancestors", `{"properties":{"lines":{"items":{"properties":{"q":{"minimum":1},"r/s":{"items":{"minimum":1}}}}}}}`,
			map[string]any{"lines": []any{
				map[string]any{"q": json.Number("0"), "r/s": []any{json.Number("0"), json.Number("1"), json.Number("0")}},
				map[string]any{"q": json.Number("0")},
			}},
			[]string{"/lines/0/q", "/lines/0/r~1s/0", "/lines/0/r~1s/2", "/lines/1/q"}},
		{"number leaves at the root", `{"properties":{"a":{"minimum":1},"b":{"maximum":1,"minimum":5}}}`,
			map[string]any{"a": json.Number("0"), "b": json.Number("2")}, []string{"/a", "/b", "/b"}},
		{"number leaves side by side", `{"items":{"properties":{"a":{"minimum":1},"b/c":{"minimum":1},"d":{"minimum":1}}}}`,
			[]any{map[string]any{"a": json.Number("0"), "b/c": json.Number("0"), "d": json.Number("0")}, map[string]any{"d": json.Number("0")}},
			[]string{"/0/a", "/0/b~1c", "/0/d", "/1/d"}},
	}
	for _, c := range cases {
		s, err := Compile(mustDecode(t, c.schema), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Evaluate(c.inst)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Failures {
			got = append(got, f.InstancePath)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: paths %q, want %q", c.name, got, c.want)
		}
	}
}
