package ijson

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parsingSuite is JSONTestSuite's test_parsing/, vendored in the repository's
// testdata/ (see its SOURCE note).
var parsingSuite = filepath.Join("..", "..", "testdata", "jsontestsuite", "test_parsing")

// TestJSONTestSuite runs every file of JSONTestSuite: n_ files must be
// rejected, y_ files accepted unless they break an I-JSON rule, and i_ files
// may go either way but must never panic.
func TestJSONTestSuite(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(parsingSuite, "*.json"))
	if err != nil || len(files) < 300 {
		t.Fatalf("JSONTestSuite not found under %s (%d files, %v)", parsingSuite, len(files), err)
	}
	// y_ files that I-JSON forbids: duplicate keys and lone surrogates.
	ijsonRejects := map[string]error{
		"y_object_duplicated_key.json":                        ErrDuplicate,
		"y_object_duplicated_key_and_value.json":              ErrDuplicate,
		"y_string_1st_surrogate_but_2nd_missing.json":         ErrUTF8,
		"y_string_1st_valid_surrogate_2nd_invalid.json":       ErrUTF8,
		"y_string_incomplete_surrogate_and_escape_valid.json": ErrUTF8,
		"y_string_incomplete_surrogate_pair.json":             ErrUTF8,
		"y_string_incomplete_surrogates_escape_valid.json":    ErrUTF8,
		"y_string_invalid_lonely_surrogate.json":              ErrUTF8,
		"y_string_invalid_surrogate.json":                     ErrUTF8,
		"y_string_inverted_surrogates_U+1D11E.json":           ErrUTF8,
		"y_string_lone_second_surrogate.json":                 ErrUTF8,
	}
	var tally = map[string][2]int{}
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, derr := Decode(data, nil)
		c := tally[name[:1]]
		if derr == nil {
			c[0]++
		} else {
			c[1]++
		}
		tally[name[:1]] = c
		switch {
		case strings.HasPrefix(name, "n_") && derr == nil:
			t.Errorf("%s: accepted, want rejected", name)
		case strings.HasPrefix(name, "y_"):
			want, rejected := ijsonRejects[name]
			switch {
			case rejected && !errors.Is(derr, want):
				t.Errorf("%s: Decode error = %v, want %v", name, derr, want)
			case !rejected && derr != nil:
				t.Errorf("%s: rejected (%v), want accepted", name, derr)
			}
		}
		if derr != nil && strings.Contains(derr.Error(), string(data)) && len(data) > 4 {
			t.Errorf("%s: error %q quotes the input", name, derr)
		}
	}
	t.Logf("accepted/rejected: y %v, n %v, i %v", tally["y"], tally["n"], tally["i"])
}

func TestDecodeRules(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"duplicate key", `{"a":1,"a":2}`, ErrDuplicate},
		{"nested duplicate", `{"x":[{"b":1,"b":1}]}`, ErrDuplicate},
		{"invalid utf8", "\"\xff\"", ErrUTF8},
		{"lone surrogate", `"\ud800"`, ErrUTF8},
		{"integer past 2^53", `9007199254740993`, ErrNumber},
		{"negative integer past 2^53", `-9007199254740993`, ErrNumber},
		{"overflow", `1e400`, ErrNumber},
		{"underflow", `1e-400`, ErrNumber},
		{"trailing value", `{} {}`, ErrTrailing},
		{"trailing bracket", `[1]]`, ErrTrailing},
		{"too deep", strings.Repeat("[", 129) + strings.Repeat("]", 129), ErrDepth},
		{"empty", ``, ErrSyntax},
		{"2^53 exactly", `9007199254740992`, nil},
		{"big float with exponent", `1e21`, nil},
		{"zero with exponent", `0e10`, nil},
		{"negative zero", `-0.0`, nil},
		{"limit depth", strings.Repeat("[", 128) + strings.Repeat("]", 128), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in), nil)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Decode(%.20q) error = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	got, err := Decode([]byte(`{"a":[1,2.50,"x",true,null],"b":{}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{json.Number("1"), json.Number("2.50"), "x", true, nil}, "b": map[string]any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}
}

func TestDeepNestingRejectedFast(t *testing.T) {
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	_, err := Decode([]byte(deep), nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrDepth || e.Offset > 200 {
		t.Errorf("Decode(100k-deep) = %v, want ErrDepth near the start", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2,{"b":null}]`, `"\ud83d\ude00"`, `1e999`, `{"a":1,"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data, nil)
		if err != nil {
			return
		}
		// Anything accepted must be valid JSON that encoding/json agrees on.
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		_ = v
	})
}
