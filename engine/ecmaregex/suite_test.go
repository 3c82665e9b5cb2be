package ecmaregex

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// suiteDir is the JSON Schema Test Suite's tests, vendored in the
// repository's testdata/ (see its SOURCE note).
var suiteDir = filepath.Join("..", "..", "testdata", "json-schema-test-suite", "tests")

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string `json:"description"`
		Data        any    `json:"data"`
		Valid       bool   `json:"valid"`
	} `json:"tests"`
}

// TestSuitePatterns runs the suite's regex files through a minimal
// evaluator of the keywords they use (type, pattern, patternProperties,
// additionalProperties), with patterns compiled by this package.
func TestSuitePatterns(t *testing.T) {
	files := []string{
		"draft2020-12/optional/ecmascript-regex.json",
		"draft2020-12/optional/non-bmp-regex.json",
		"draft7/optional/ecmascript-regex.json",
		"draft7/optional/non-bmp-regex.json",
	}
	passed, total := 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(suiteDir, f))
		if err != nil {
			t.Fatalf("reading the suite: %v", err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(raw, &groups); err != nil {
			t.Fatalf("decoding %s: %v", f, err)
		}
		for _, g := range groups {
			var schema any
			if err := json.Unmarshal(g.Schema, &schema); err != nil {
				t.Fatalf("decoding a schema of %s: %v", f, err)
			}
			for _, tc := range g.Tests {
				total++
				name := f + "/" + g.Description + "/" + tc.Description
				got, err := miniValidate(schema, tc.Data)
				switch {
				case err != nil:
					t.Errorf("%s: %v", name, err)
				case got != tc.Valid:
					t.Errorf("%s: valid = %v, want %v", name, got, tc.Valid)
				default:
					passed++
				}
			}
		}
	}
	t.Logf("suite regex cases: %d/%d passed", passed, total)
}

// miniValidate evaluates the few keywords the regex files use.
func miniValidate(schema, data any) (bool, error) {
	switch s := schema.(type) {
	case bool:
		return s, nil
	case map[string]any:
		for k := range s {
			switch k {
			case "$schema", "type", "pattern", "patternProperties", "additionalProperties":
			default:
				return false, fmt.Errorf("keyword %q is outside this test's evaluator", k)
			}
		}
		if ty, ok := s["type"].(string); ok && !hasType(data, ty) {
			return false, nil
		}
		if p, ok := s["pattern"].(string); ok {
			if str, isStr := data.(string); isStr {
				re, err := Compile(p)
				if err != nil {
					return false, err
				}
				if !re.MatchString(str) {
					return false, nil
				}
			}
		}
		obj, isObj := data.(map[string]any)
		if !isObj {
			return true, nil
		}
		pp, _ := s["patternProperties"].(map[string]any)
		for key, val := range obj {
			matched := false
			for p, sub := range pp {
				re, err := Compile(p)
				if err != nil {
					return false, err
				}
				if !re.MatchString(key) {
					continue
				}
				matched = true
				if ok, err := miniValidate(sub, val); err != nil || !ok {
					return false, err
				}
			}
			if ap, ok := s["additionalProperties"]; ok && !matched {
				if ok, err := miniValidate(ap, val); err != nil || !ok {
					return false, err
				}
			}
		}
		return true, nil
	}
	return false, errors.New("schema is neither an object nor a boolean")
}

func hasType(data any, ty string) bool {
	switch ty {
	case "string":
		_, ok := data.(string)
		return ok
	case "object":
		_, ok := data.(map[string]any)
		return ok
	case "integer":
		f, ok := data.(float64)
		return ok && f == float64(int64(f))
	}
	return false
}
