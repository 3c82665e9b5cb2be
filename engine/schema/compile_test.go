package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		opts    *Options
		pointer string
		problem string // substring of Problem
		fix     string // substring of Fix
	}{
		{"type not a string", `{"type":5}`, nil, "/type", "type must be a string or an array of strings, found number", `"integer"`},
		{"unknown type", `{"properties":{"a":{"type":"strin"}}}`, nil, "/properties/a/type", "type names an unknown type", "use one of"},
		{"minimum not a number", `{"minimum":"x"}`, nil, "/minimum", "minimum must be a number, found string", "write minimum as a number"},
		{"required with a number", `{"required":[1]}`, nil, "/required", "required must be an array of strings", `"required": ["id", "total"]`},
		{"required twice", `{"required":["a","a"]}`, nil, "/required", "lists a property name twice", "once"},
		{"negative minLength", `{"minLength":-1}`, nil, "/minLength", "non-negative integer", "minLength"},
		{"fractional maxItems", `{"maxItems":1.5}`, nil, "/maxItems", "non-negative integer", "maxItems"},
		{"zero multipleOf", `{"multipleOf":0}`, nil, "/multipleOf", "greater than 0", "positive"},
		{"enum not an array", `{"enum":5}`, nil, "/enum", "enum must be an array", "enum"},
		{"schema not an object", `{"properties":{"a":5}}`, nil, "/properties/a", "a schema must be an object or a boolean, found number", "{}"},
		{"root not a schema", `"x"`, nil, "", "a schema must be an object or a boolean", "true or false"},
		{"items array in 2020-12", `{"items":[{}]}`, nil, "/items", "a schema must be an object or a boolean", ""},
		{"look-behind", `{"pattern":"(?<=a)b"}`, nil, "/pattern", "cannot be compiled", "RE2"},
		{"back-reference in patternProperties", `{"patternProperties":{"(a)\\1":{}}}`, nil, "/patternProperties/(a)\\1", "cannot be compiled", "never backtracks"},
		{"broken pattern", `{"pattern":"["}`, nil, "/pattern", "cannot be compiled", "correct the regular expression"},
		{"unknown draft", `{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, nil, "/$schema", "names a draft this verifier does not know", "draft-07"},
		{"remote ref", `{"properties":{"a":{"$ref":"https://example.com/other.json"}}}`, nil, "/properties/a/$ref", "points outside the document", "remote references are not fetched; inline the schema under $defs"},
		{"relative remote ref", `{"$ref":"other.json#/x"}`, nil, "/$ref", "points outside the document", "not fetched"},
		{"dangling pointer", `{"$ref":"#/$defs/missing"}`, nil, "/$ref", "points to nothing", "existing subschema"},
		{"pointer index with a sign", `{"allOf":[{}],"$ref":"#/allOf/+0"}`, nil, "/$ref", "points to nothing", ""},
		{"pointer index with a minus", `{"allOf":[{}],"$ref":"#/allOf/-0"}`, nil, "/$ref", "points to nothing", ""},
		{"pointer index with a leading zero", `{"allOf":[{},{}],"$ref":"#/allOf/01"}`, nil, "/$ref", "points to nothing", ""},
		{"unknown anchor", `{"$ref":"#nope"}`, nil, "/$ref", "anchor that does not exist", "$anchor"},
		{"self loop", `{"$ref":"#"}`, nil, "/$ref", "never end", "properties or items"},
		{"loop through allOf", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, nil, "/$defs/b/allOf/0/$ref", "never end", ""},
		{"error in an unreferenced definition", `{"$defs":{"x":{"minimum":"1"}}}`, nil, "/$defs/x/minimum", "must be a number", ""},
		{"$id with fragment", `{"$id":"https://example.com/s.json#frag"}`, nil, "/$id", "contains a fragment", "$anchor"},
		{"bad anchor", `{"$anchor":"1abc"}`, nil, "/$anchor", "plain name", "letter"},
		{"meta-schema: title", `{"title":5}`, nil, "/title", "meta-schema", "meta-schema"},
		{"meta-schema: $defs", `{"$defs":5}`, nil, "/$defs", "meta-schema", ""},
		{"draft-07 type", `{"$schema":"http://json-schema.org/draft-07/schema#","items":{"type":"x"}}`, nil, "/items/type", "type names an unknown type", ""},
		{"draft-07 enum must not be empty", `{"$schema":"http://json-schema.org/draft-07/schema","enum":[]}`, nil, "/enum", "meta-schema", ""},
		{"too deep", strings.Repeat(`{"not":`, 130) + `{}` + strings.Repeat(`}`, 130), nil, strings.Repeat("/not", 129), "more than 128 levels", "$defs"},
		{"too many nodes", `{"properties":{"a":{},"b":{},"c":{}}}`, &Options{MaxNodes: 3}, "/properties/c", "more than 3 subschemas", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(mustDecode(t, tt.schema), tt.opts)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%s) error = %v, want *Error", tt.schema, err)
			}
			if se.Pointer != tt.pointer {
				t.Errorf("Compile(%s) Pointer = %q, want %q (%v)", tt.schema, se.Pointer, tt.pointer, se)
			}
			if !strings.Contains(se.Problem, tt.problem) {
				t.Errorf("Compile(%s) Problem = %q, want it to contain %q", tt.schema, se.Problem, tt.problem)
			}
			if !strings.Contains(se.Fix, tt.fix) {
				t.Errorf("Compile(%s) Fix = %q, want it to contain %q", tt.schema, se.Fix, tt.fix)
			}
			if se.Error() == "" || se.Fix == "" {
				t.Errorf("Compile(%s): empty error text", tt.schema)
			}
		})
	}
}

func TestCompileValid(t *testing.T) {
	tests := []struct {
		name, schema, valid, invalid string
	}{
		{"draft-07 without #", `{"$schema":"http://json-schema.org/draft-07/schema","type":"string"}`, `"a"`, `1`},
		{"draft-07 $ref ignores siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","type":"number"}}}`, `{"a":"x"}`, `{"a":1}`},
		{"2020-12 $ref with siblings", `{"$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","minLength":2}}}`, `{"a":"xy"}`, `{"a":"x"}`},
		{"ref to the 2020-12 meta-schema", `{"$ref":"https://json-schema.org/draft/2020-12/schema"}`, `{"type":"string"}`, `{"type":5}`},
		{"ref to the draft-07 meta-schema", `{"$ref":"http://json-schema.org/draft-07/schema#"}`, `{"minLength":1}`, `{"minLength":-1}`},
		{"anchor", `{"$defs":{"s":{"$anchor":"str","type":"string"}},"$ref":"#str"}`, `"a"`, `1`},
		{"embedded resource", `{"$id":"https://example.com/root.json","$defs":{"p":{"$id":"part.json","type":"integer"}},"$ref":"part.json"}`, `1`, `1.5`},
		{"recursion through properties", `{"properties":{"child":{"$ref":"#"}},"required":["n"]}`, `{"n":1,"child":{"n":2}}`, `{"n":1,"child":{}}`},
		{"bignum bounds", `{"maximum":18446744073709551615,"multipleOf":0.0001}`, `18446744073709551600.0001`, `18446744073709551616`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := evaluate(t, tt.schema, tt.valid); !res.Valid {
				t.Errorf("Evaluate(%s) invalid: %+v", tt.valid, res.Failures)
			}
			if res := evaluate(t, tt.schema, tt.invalid); res.Valid {
				t.Errorf("Evaluate(%s) valid, want invalid", tt.invalid)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	reg := NewRegistry()
	if err := reg.Add("https://schemas.example.com/money.json", mustDecode(t, `{"$defs":{"amount":{"type":"number","minimum":0}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add("relative.json", map[string]any{}); err == nil {
		t.Error("Add(relative URI) succeeded, want an error")
	}
	s, err := Compile(mustDecode(t, `{"$ref":"https://schemas.example.com/money.json#/$defs/amount"}`), &Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for inst, want := range map[string]bool{`1.5`: true, `-1`: false} {
		res, err := s.Evaluate(mustDecode(t, inst))
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != want {
			t.Errorf("Evaluate(%s).Valid = %v, want %v", inst, res.Valid, want)
		}
	}
	if err := NewRegistry().AddDir("does-not-exist"); err == nil {
		t.Error("AddDir(missing dir) succeeded, want an error")
	}
}

// TestRegistryDirByID holds AddDir as --schema-dir calls it: each file is
// registered under its own $id, and a file without one is refused by name.
func TestRegistryDirByID(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("money.json", `{"$id":"https://schemas.example.com/money.json","type":"number","minimum":0}`)
	reg := NewRegistry()
	if err := reg.AddDir(dir); err != nil {
		t.Fatalf("AddDir(dir) = %v", err)
	}
	s, err := Compile(mustDecode(t, `{"$ref":"https://schemas.example.com/money.json"}`), &Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Evaluate(mustDecode(t, `-1`)); err != nil || res.Valid {
		t.Errorf("Evaluate(-1) = %+v, %v, want invalid", res, err)
	}
	write("no-id.json", `{"type":"string"}`)
	if err := NewRegistry().AddDir(dir); err == nil || !strings.Contains(err.Error(), "no-id.json") {
		t.Errorf("AddDir(a file without $id) = %v, want an error naming no-id.json", err)
	}
}

func TestEvaluateLimits(t *testing.T) {
	t.Run("step limit", func(t *testing.T) {
		s, err := Compile(mustDecode(t, `{"items":{"items":{"type":"integer"}}}`), &Options{MaxSteps: 10})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Evaluate(mustDecode(t, `[[1,2,3],[4,5,6],[7,8,9],[1],[2],[3],[4],[5],[6],[7],[8]]`)); !errors.Is(err, ErrTooComplex) {
			t.Errorf("Evaluate error = %v, want ErrTooComplex", err)
		}
		if _, err := s.Evaluate(mustDecode(t, `[[1]]`)); err != nil {
			t.Errorf("Evaluate of a small instance: %v", err)
		}
	})
	t.Run("dynamic loop", func(t *testing.T) {
		// a $dynamicRef target depends on the dynamic scope, so this loop is
		// caught by the evaluator's depth bound rather than the compiler
		s, err := Compile(mustDecode(t, `{"$dynamicAnchor":"a","$dynamicRef":"#a"}`), nil)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if _, err := s.Evaluate(json.Number("1")); !errors.Is(err, ErrTooComplex) {
			t.Errorf("Evaluate error = %v, want ErrTooComplex", err)
		}
	})
	t.Run("unsupported value", func(t *testing.T) {
		s, err := Compile(mustDecode(t, `{"type":"object"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []any{struct{}{}, 3} {
			if _, err := s.Evaluate(v); err == nil {
				t.Errorf("Evaluate(%#v) succeeded, want an error", v)
			}
		}
		if res, err := s.Evaluate(map[string]any{"a": 1.5}); err != nil || !res.Valid {
			t.Errorf("Evaluate(float64) = %+v, %v; want valid", res, err)
		}
	})
}

// TestConcurrentEvaluate shares one compiled schema between goroutines.
func TestConcurrentEvaluate(t *testing.T) {
	s, err := Compile(readBenchDoc(t, "invoice.schema.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := []any{readBenchDoc(t, "invoice.valid.json"), readBenchDoc(t, "invoice.invalid50.json")}
	want := make([]string, len(docs))
	for i, d := range docs {
		res, err := s.Evaluate(d)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = renderResult(res)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := (g + i) % len(docs)
				res, err := s.Evaluate(docs[k])
				if err != nil {
					errs <- err
					return
				}
				if got := renderResult(res); got != want[k] {
					errs <- fmt.Errorf("result %d differs under concurrency", k)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDuplicateAnchorIsDeterministic: of two subschemas that declare the
// same anchor, the same one is taken on every compilation (the one whose
// key sorts first), not whichever Go's map order visits first.
func TestDuplicateAnchorIsDeterministic(t *testing.T) {
	doc := `{"$defs":{"b":{"$anchor":"x","type":"number"},"a":{"$anchor":"x","type":"string"}},"$ref":"#x"}`
	for range 50 {
		s, err := Compile(mustDecode(t, doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Evaluate(mustDecode(t, `"s"`))
		if err != nil || !res.Valid {
			t.Fatalf("Evaluate(\"s\") = %+v, %v: want valid ($defs/a, which sorts first, declares the anchor)", res, err)
		}
	}
}
