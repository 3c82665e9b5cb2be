package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
)

// googleSchemas are schemas whose semantics github.com/google/jsonschema-go
// implements like this package (draft 2020-12, no format assertion, patterns
// whose RE2 and ECMA-262 meanings agree).
var googleSchemas = []string{
	0:  "", // the peers' invoice schema, read from the bench folder
	1:  specSchema,
	2:  `{"anyOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":0}],"not":{"const":5}}`,
	3:  `{"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]},"oneOf":[{"type":"object"},{"type":"array"}]}`,
	4:  `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"number"},"contains":{"minimum":10},"minContains":1,"maxContains":2,"uniqueItems":true,"maxItems":5}`,
	5:  `{"type":"object","properties":{"a":{"type":"boolean"}},"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":{"type":"null"},"propertyNames":{"maxLength":5},"minProperties":1,"maxProperties":4,"dependentRequired":{"a":["b"]},"dependentSchemas":{"b":{"properties":{"b":{"type":"integer"}}}}}`,
	6:  `{"allOf":[{"properties":{"a":{}}}],"anyOf":[{"properties":{"b":{}}},{"properties":{"c":{}}}],"unevaluatedProperties":false}`,
	7:  `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer","multipleOf":3},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]}},"$ref":"#/$defs/node"}`,
	8:  `{"enum":[1,"a",null,true,[1,2],{"k":"v"}]}`,
	9:  `{"type":"number","minimum":-5,"exclusiveMaximum":100,"multipleOf":0.5}`,
	10: `{"prefixItems":[{"type":"integer"}],"contains":{"type":"string"},"unevaluatedItems":{"type":"boolean"}}`,
	11: `{"type":["object","string"],"minLength":2,"pattern":"^[a-z]+[0-9]*$","required":["id"],"properties":{"id":{"type":"string","minLength":1}}}`,
}

type googlePair struct {
	ours   *Schema
	google *gjs.Resolved
}

func compileGooglePairs(t testing.TB) []googlePair {
	t.Helper()
	var out []googlePair
	for i, src := range googleSchemas {
		var raw []byte
		if i == 0 {
			b, err := json.Marshal(readBenchDoc(t, "invoice.schema.json"))
			if err != nil {
				t.Fatal(err)
			}
			raw = b
		} else {
			raw = []byte(src)
		}
		ours, err := Compile(mustDecode(t, string(raw)), nil)
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		var gs gjs.Schema
		if err := json.Unmarshal(raw, &gs); err != nil {
			t.Fatalf("schema %d (google): %v", i, err)
		}
		rs, err := gs.Resolve(nil)
		if err != nil {
			t.Fatalf("schema %d (google resolve): %v", i, err)
		}
		out = append(out, googlePair{ours, rs})
	}
	return out
}

// exactFloats reports whether every number in v is exactly a float64, so
// that google (which sees float64) and this package (which sees the
// literal) judge the same value.
func exactFloats(v any) bool {
	switch x := v.(type) {
	case json.Number:
		if n := new(number); !parseNumber(string(x), n) || n.exp > 400 || n.exp < -1100 || len(x) > 400 {
			return false // big.Rat would expand the exponent
		}
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return false
		}
		f, err := x.Float64()
		if err != nil {
			return false
		}
		fr, _ := new(big.Float).SetFloat64(f).Rat(nil)
		if fr == nil { // ±Inf
			return false
		}
		return r.Cmp(fr) == 0
	case []any:
		for _, c := range x {
			if !exactFloats(c) {
				return false
			}
		}
	case map[string]any:
		for _, c := range x {
			if !exactFloats(c) {
				return false
			}
		}
	}
	return true
}

// FuzzAgainstGoogle compares the verdict with google/jsonschema-go's
// Validate on fuzzed instances.
func FuzzAgainstGoogle(f *testing.F) {
	// Seeds live in testdata/fuzz/FuzzAgainstGoogle (small instances: the
	// 8 KB invoices slow the mutator down to a crawl).
	pairs := compileGooglePairs(f)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		p := pairs[int(which)%len(pairs)]
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var ours any
		if dec.Decode(&ours) != nil || dec.More() || len(data) > 1<<16 || !exactFloats(ours) {
			return
		}
		var theirs any
		if json.Unmarshal(data, &theirs) != nil {
			return
		}
		res, err := p.ours.Evaluate(ours)
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		if res.Valid != (res.Passed == res.Total) || len(res.Failures) != res.Total-res.Passed {
			t.Fatalf("inconsistent accounting: %+v", res)
		}
		gerr := p.google.Validate(theirs)
		if res.Valid != (gerr == nil) {
			t.Errorf("schema %d, instance %s: valid = %v, google says %v; failures %+v",
				int(which)%len(pairs), data, res.Valid, gerr, res.Failures)
		}
	})
}

var compileProbes = []any{nil, true, json.Number("1.5"), "ab", []any{json.Number("1"), "x", []any{}},
	map[string]any{"a": json.Number("1"), "b": map[string]any{"c": nil}}}

// FuzzCompile: arbitrary schema bytes never panic or hang the compiler or
// the evaluator.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{specSchema, `{"$ref":"#"}`, `{"type":5}`, `{"$dynamicAnchor":"a","$dynamicRef":"#a"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{}],"additionalItems":false,"dependencies":{"a":["b"],"c":{}}}`,
		`{"$id":"urn:x","$defs":{"a":{"$anchor":"a","pattern":"^(a|b)*$"}},"properties":{"p":{"$ref":"#a"}},"unevaluatedProperties":false}`,
		`{"allOf":[{"$ref":"https://json-schema.org/draft/2020-12/schema"}],"patternProperties":{"[":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := decodeJSON(data)
		if err != nil {
			return
		}
		s, err := Compile(doc, &Options{MaxSteps: 20_000, MaxNodes: 2_000})
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Compile error %v is not an *Error", err)
			}
			return
		}
		for _, inst := range compileProbes {
			res, err := s.Evaluate(inst)
			if errors.Is(err, ErrTooComplex) {
				continue
			}
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if res.Valid != (res.Passed == res.Total) || len(res.Failures) != res.Total-res.Passed {
				t.Fatalf("inconsistent accounting for %s on %v: %+v", data, inst, res)
			}
		}
	})
}
