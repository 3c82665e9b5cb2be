package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestNumberLeafFailuresMatchValue holds a number leaf under properties,
// whose failures object() records from leafNumber's mask without
// evaluating again (leafNumberFailed), to the same leaf under items, which
// evaluates it again on the recording path (value): the same checks
// counted, and the same failures in the same order, reading the same.
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

// TestNumChecksBits keeps numChecks in step with the mask's bits.
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

// TestLeafNumberShortcuts holds leafNumber's shortcuts (numInt, numSign) to
// leafNumberAny, which parses what it must, on every literal: the same
// checks held and the same failed.
func TestLeafNumberShortcuts(t *testing.T) {
	schemas := []struct {
		schema        string
		numInt, nSign bool
	}{
		{`{"type":"integer","minimum":1}`, true, false},
		{`{"type":"integer","minimum":1,"maximum":50}`, true, false},
		{`{"exclusiveMinimum":0,"exclusiveMaximum":100}`, true, false},
		{`{"minimum":-5,"exclusiveMaximum":5}`, true, false},
		{`{"type":"number","minimum":0}`, true, true},
		{`{"type":["number","string"],"maximum":0}`, true, true},
		{`{"exclusiveMinimum":0,"exclusiveMaximum":0}`, true, true},
		{`{"type":"integer","minimum":0}`, true, false},
		{`{"type":"integer"}`, true, false},
		{`{"type":"string","minimum":1}`, false, false},
		{`{"minimum":0.5}`, false, false},
		{`{"type":"integer","multipleOf":2}`, false, false},
		{`{"enum":[0,7,19,20]}`, true, false},
		{`{"enum":[7.0,"7",1.5,70e-1,1e400,-0,12345678901234567890123],"minimum":-1}`, true, false},
		{`{"type":"integer","enum":[-3,99,100.0,"x",null],"exclusiveMaximum":100}`, true, false},
		{`{"enum":[` + strings.Repeat(`1,`, 40) + `2]}`, false, false}, // indexed: hasNumber's lookup
	}
	lits := []string{"0", "-0", "1", "2", "3", "7", "9", "10", "19", "20", "50", "51", "99", "100", "-1", "-3", "-10", "1.5", "-0.5", "0.0", "7.0",
		"1e2", "-1e-2", "123456789012345678", "1234567890123456789", "01", "abc", "1x", "-", ""}
	for _, c := range schemas {
		s, err := Compile(mustDecode(t, c.schema), nil)
		if err != nil {
			t.Fatal(err)
		}
		n := s.root
		if n.numInt != c.numInt || n.numSign != c.nSign {
			t.Fatalf("%s: numInt %v, numSign %v; want %v, %v", c.schema, n.numInt, n.numSign, c.numInt, c.nSign)
		}
		for _, lit := range lits {
			held, failed := leafNumber(n, json.Number(lit))
			wantHeld, wantFailed := leafNumberAny(n, json.Number(lit))
			if held != wantHeld || failed != wantFailed {
				t.Errorf("%s on %q: leafNumber (%d, %08b), leafNumberAny (%d, %08b)", c.schema, lit, held, failed, wantHeld, wantFailed)
			}
		}
	}
}

func TestLitInt(t *testing.T) {
	for _, c := range []struct {
		lit string
		v   int64
		ok  bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"10", 10, true}, {"99", 99, true}, {"100", 100, true},
		{"-0", 0, true}, {"-7", -7, true}, {"-42", -42, true},
		{"123456789012345678", 123456789012345678, true}, {"1234567890123456789", 0, false},
		{"00", 0, false}, {"01", 0, false}, {"-01", 0, false}, {"1.0", 0, false}, {"1e2", 0, false},
		{"", 0, false}, {"-", 0, false}, {"a", 0, false}, {"1a", 0, false}, {"/", 0, false}, {":", 0, false},
	} {
		if v, ok := litInt(c.lit); v != c.v || ok != c.ok {
			t.Errorf("litInt(%q) = %d, %v; want %d, %v", c.lit, v, ok, c.v, c.ok)
		}
	}
}
