package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

func evaluate(t testing.TB, schema, instance string) *Result {
	t.Helper()
	s, err := Compile(mustDecode(t, schema), nil)
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	res, err := s.Evaluate(mustDecode(t, instance))
	if err != nil {
		t.Fatalf("Evaluate(%s): %v", instance, err)
	}
	if res.Valid != (res.Passed == res.Total) || len(res.Failures) != res.Total-res.Passed {
		t.Fatalf("inconsistent result: valid %v, passed %d of %d, %d failures", res.Valid, res.Passed, res.Total, len(res.Failures))
	}
	return res
}

type countCase struct {
	name             string
	schema, instance string
	passed, total    int
}

func runCounts(t *testing.T, tests []countCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := evaluate(t, tt.schema, tt.instance)
			if res.Passed != tt.passed || res.Total != tt.total {
				t.Errorf("Evaluate(%s, %s) = %d/%d checks, want %d/%d; failures: %+v",
					tt.schema, tt.instance, res.Passed, res.Total, tt.passed, tt.total, res.Failures)
			}
		})
	}
}

const specSchema = `{"type":"object","required":["items","total"],"properties":{"items":{"type":"array","items":{"type":"object","required":["id","price"],"properties":{"id":{"type":"string"},"price":{"type":"number"}}}},"total":{"type":"number"}}}`

// TestSpecExample is the worked example of SPEC §3.1: 12 checks.
func TestSpecExample(t *testing.T) {
	runCounts(t, []countCase{
		{"valid output", specSchema, `{"items":[{"id":"a","price":1},{"id":"b","price":2.5}],"total":3.5}`, 12, 12},
		{"one wrong price", specSchema, `{"items":[{"id":"a","price":"1"},{"id":"b","price":2}],"total":3}`, 11, 12},
		// a missing property is one failed required check, and its own
		// assertions are not evaluated
		{"a missing id", specSchema, `{"items":[{"id":"a","price":1},{"price":2}],"total":3}`, 10, 11},
	})
}

// TestCountAssertions: one check per assertion keyword evaluated at an
// instance location.
func TestCountAssertions(t *testing.T) {
	runCounts(t, []countCase{
		{"type", `{"type":"string"}`, `"a"`, 1, 1},
		{"type list", `{"type":["string","null"]}`, `null`, 1, 1},
		{"integer accepts 1.0", `{"type":"integer"}`, `1.0`, 1, 1},
		{"enum", `{"enum":["a","b"]}`, `"c"`, 0, 1},
		{"const", `{"const":{"a":[1,2]}}`, `{"a":[1.0,2]}`, 1, 1},
		{"string keywords", `{"minLength":1,"maxLength":3,"pattern":"^a"}`, `"abcd"`, 2, 3},
		{"number keywords", `{"multipleOf":0.01,"minimum":0,"maximum":10,"exclusiveMinimum":0,"exclusiveMaximum":10}`, `19.99`, 3, 5},
		{"array keywords", `{"minItems":1,"maxItems":2,"uniqueItems":true}`, `[1,1.0,2]`, 1, 3},
		{"uniqueItems false asserts nothing", `{"uniqueItems":false}`, `[1,1]`, 0, 0},
		{"object keywords", `{"minProperties":1,"maxProperties":1}`, `{"a":1,"b":2}`, 1, 2},
		{"required is one check, not one per name", `{"required":["a","b","c"]}`, `{}`, 0, 1},
		{"dependentRequired is one check", `{"dependentRequired":{"a":["b"],"c":["d"]}}`, `{"a":1,"c":2}`, 0, 1},
		{"draft-07 dependencies array form", `{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}}`, `{"a":1,"b":2}`, 1, 1},
		{"known format is asserted", `{"format":"date"}`, `"2024-02-30"`, 0, 1},
		{"unknown format is an annotation", `{"format":"x-custom"}`, `"anything"`, 0, 0},
		{"per location: each item", `{"items":{"type":"integer","minimum":0}}`, `[1,-1,"x"]`, 3, 5},
	})
}

// TestCountNotApplicable: a keyword that does not apply to the instance's
// type is neither evaluated nor counted.
func TestCountNotApplicable(t *testing.T) {
	runCounts(t, []countCase{
		{"string keywords on a number", `{"minLength":1,"pattern":"x","format":"email"}`, `5`, 0, 0},
		{"number keywords on a string", `{"minimum":1,"multipleOf":2}`, `"a"`, 0, 0},
		{"array keywords on an object", `{"minItems":1,"uniqueItems":true,"contains":{}}`, `{}`, 0, 0},
		{"object keywords on an array", `{"required":["a"],"minProperties":1,"additionalProperties":false,"propertyNames":{"maxLength":1}}`, `[]`, 0, 0},
		{"type, enum and const apply to everything", `{"type":"object","enum":[1],"const":1}`, `[]`, 0, 3},
	})
}

// TestCountFalseSchema: a false schema reached through an applicator is one
// check per location it guards.
func TestCountFalseSchema(t *testing.T) {
	runCounts(t, []countCase{
		{"root false", `false`, `1`, 0, 1},
		{"root true", `true`, `1`, 0, 0},
		{"properties false when present", `{"properties":{"a":false,"b":false}}`, `{"a":1}`, 0, 1},
		{"properties false when absent", `{"properties":{"a":false}}`, `{}`, 0, 0},
		{"additionalProperties false holds", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, 1, 1},
		{"additionalProperties false is one check for many extras", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":2,"c":3}`, 0, 1},
		{"items false after prefixItems", `{"prefixItems":[{}],"items":false}`, `[1,2,3]`, 0, 1},
		{"draft-07 additionalItems false", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{}],"additionalItems":false}`, `[1]`, 1, 1},
		{"unevaluatedProperties false", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":2}`, 0, 1},
		{"unevaluatedItems false", `{"prefixItems":[{}],"unevaluatedItems":false}`, `[1]`, 1, 1},
		{"patternProperties false per key", `{"patternProperties":{"^x":false}}`, `{"x1":1,"x2":2,"y":3}`, 0, 2},
		{"false through $ref", `{"$defs":{"no":false},"properties":{"a":{"$ref":"#/$defs/no"}}}`, `{"a":1}`, 0, 1},
	})
}

// TestCountCombinators: anyOf, oneOf, not, contains and the if condition
// are one check each; their branches decide it uncounted. The then/else
// branch taken counts normally; propertyNames is one check per object.
func TestCountCombinators(t *testing.T) {
	runCounts(t, []countCase{
		{"anyOf passes", `{"anyOf":[{"type":"string","minLength":5},{"type":"integer"}]}`, `3`, 1, 1},
		{"anyOf fails", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `3.5`, 0, 1},
		{"oneOf passes", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `3`, 1, 1},
		{"oneOf fails on two matches", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `3`, 0, 1},
		{"not", `{"not":{"type":"string","minLength":2}}`, `"abc"`, 0, 1},
		{"contains", `{"contains":{"type":"string","maxLength":1}}`, `[1,"a","bb"]`, 1, 1},
		{"contains with maxContains", `{"contains":{"type":"string"},"maxContains":1}`, `["a","b"]`, 1, 2},
		{"minContains decides contains", `{"contains":{"type":"string"},"minContains":2}`, `["a",1]`, 0, 1},
		{"if condition holds, then counted", `{"if":{"type":"string"},"then":{"minLength":3},"else":{"minimum":0}}`, `"ab"`, 1, 2},
		{"if condition fails, else counted", `{"if":{"type":"string"},"then":{"minLength":3},"else":{"minimum":0}}`, `-1`, 1, 2},
		{"if without then or else", `{"if":{"type":"string"}}`, `1`, 1, 1},
		{"propertyNames one check", `{"propertyNames":{"maxLength":2,"pattern":"^[a-z]+$"}}`, `{"ab":1,"cde":2,"F":3}`, 0, 1},
		{"nested combinators count once", `{"anyOf":[{"not":{"anyOf":[{"type":"null"}]}}]}`, `1`, 1, 1},
	})
}

// TestCountApplicators: applicators are not checks; the assertions they
// reach are.
func TestCountApplicators(t *testing.T) {
	runCounts(t, []countCase{
		{"allOf", `{"allOf":[{"type":"number"},{"minimum":1},{}]}`, `0`, 1, 2},
		{"$ref", `{"$defs":{"pos":{"type":"integer","minimum":1}},"items":{"$ref":"#/$defs/pos"}}`, `[1,2,0]`, 5, 6},
		{"patternProperties and additionalProperties", `{"patternProperties":{"^n":{"type":"number"}},"additionalProperties":{"type":"string"}}`, `{"n1":1,"n2":"x","s":"y","t":2}`, 2, 4},
		{"prefixItems and items", `{"prefixItems":[{"type":"string"}],"items":{"type":"number"}}`, `["a",1,"b"]`, 2, 3},
		{"dependentSchemas", `{"dependentSchemas":{"a":{"required":["b"]}}}`, `{"a":1}`, 0, 1},
		{"unevaluatedProperties schema", `{"properties":{"a":{}},"unevaluatedProperties":{"type":"string"}}`, `{"a":1,"b":"x","c":2}`, 1, 2},
		{"$dynamicRef", `{"$dynamicAnchor":"node","type":"object","properties":{"next":{"$dynamicRef":"#node"}}}`, `{"next":{"next":1}}`, 2, 3},
		{"empty schema has no checks", `{}`, `{"a":[1,2]}`, 0, 0},
	})
}

// TestFailureCount: every failed check produces exactly one failure.
func TestFailureCount(t *testing.T) {
	res := evaluate(t, specSchema, `{"items":[{"id":1,"price":"x"},{}],"total":"3"}`)
	want := []string{"type", "type", "required", "type"}
	var got []string
	for _, f := range res.Failures {
		got = append(got, f.Keyword)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failure keywords (-want +got):\n%s", diff)
	}
}
