package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestNumberLeafFailuresMatchValue holds a number leaf under properties to
// the same leaf under items: the same checks counted, and the same
// failures in the same order, reading the same.
func TestNumberLeafFailuresMatchValue(t *testing.T) {
	schemas := []string{
		`{"type":"integer","minimum":1}`,
		`{"type":"number","minimum":0,"maximum":10}`,
		`{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":3,"multipleOf":2}`,
		`{"type":["integer","string"],"minimum":1.5,"maximum":2.5}`,
		`{"type":"string","minimum":1}`,
		`{"enum":[0,7,19,20],"minimum":5}`,
		`{"const":2,"multipleOf":0.5,"maximum":1}`,
		`{"type":"integer","enum":[1,"1",1.5],"const":1.0,"multipleOf":1,"minimum":0,"maximum":0,"exclusiveMinimum":1,"exclusiveMaximum":0}`,
		`{"minimum":-1e400,"maximum":1e400,"exclusiveMinimum":12345678901234567890123,"multipleOf":0.0001}`,
	}
	numbers := []string{"0", "-0", "1", "-1", "1.0", "1.5", "2", "2e0", "3", "20", "1e400", "-1e400",
		"12345678901234567890123", "0.00010", "123456789012345678"}
	checked := 0
	for _, s := range schemas {
		for _, num := range numbers {
			viaProps := evaluate(t, `{"properties":{"x":`+s+`}}`, `{"x":`+num+`}`)
			viaItems := evaluate(t, `{"items":`+s+`}`, `[`+num+`]`)
			if viaProps.Passed != viaItems.Passed || viaProps.Total != viaItems.Total {
				t.Errorf("%s on %s: %d/%d checks under properties, %d/%d under items",
					s, num, viaProps.Passed, viaProps.Total, viaItems.Passed, viaItems.Total)
			}
			if got, want := readFailures(viaProps.Failures, "/properties/x"), readFailures(viaItems.Failures, "/items"); got != want {
				t.Errorf("%s on %s: under properties\n%s\nunder items\n%s", s, num, got, want)
			}
			checked += len(viaItems.Failures)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d failures compared", checked)
	}
}

// readFailures lists failures with their keyword locations relative to
// the subschema at base, and without their instance paths.
func readFailures(fs []Failure, base string) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s: %s / %s / %s\n", f.Keyword, strings.TrimPrefix(f.KeywordLocation, base), f.Expected, f.Found, f.Message)
	}
	return b.String()
}

// TestNumChecksBits keeps numChecks in step with numberChecks' mask bits.
func TestNumChecksBits(t *testing.T) {
	bits := map[uint8]kwID{numFailType: kwType, numFailEnum: kwEnum, numFailConst: kwConst, numFailMultipleOf: kwMultipleOf,
		numFailMinimum: kwMinimum, numFailMaximum: kwMaximum, numFailExclMin: kwExclusiveMinimum, numFailExclMax: kwExclusiveMaximum}
	for i, kw := range numChecks {
		if got := bits[1<<i]; got != kw {
			t.Errorf("numChecks[%d] = %s, the mask's bit %d is %s", i, kw, i, got)
		}
	}
}

// TestMalformedNumberFailing holds a json.Number that is no JSON number, and
// fails a check, to an error (as value rejects it) wherever the leaf
// stands, never to a recorded failure quoting it.
func TestMalformedNumberFailing(t *testing.T) {
	for _, schema := range []string{`{"type":"integer","minimum":5}`, `{"minimum":5}`, `{"enum":[1,2]}`, `{"multipleOf":2}`} {
		for _, wrap := range []struct {
			schema string
			inst   func(any) any
		}{
			{`{"properties":{"x":%s}}`, func(v any) any { return map[string]any{"x": v} }},
			{`{"items":%s}`, func(v any) any { return []any{v} }},
		} {
			s, err := Compile(mustDecode(t, fmt.Sprintf(wrap.schema, schema)), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, lit := range []string{"abc", "1x", "--1", ""} {
				if res, err := s.Evaluate(wrap.inst(json.Number(lit))); err == nil {
					t.Errorf("%s on %q: no error, %d/%d checks, failures %v", fmt.Sprintf(wrap.schema, schema), lit, res.Passed, res.Total, res.Failures)
				}
			}
		}
	}
}
