package engine

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestFormatSum: a computed sum prints as the hosted service's Python
// prints it: an int when every addend is an integer literal, otherwise
// repr of the float.
func TestFormatSum(t *testing.T) {
	tests := []struct {
		addends []json.Number
		want    string
	}{
		{[]json.Number{"75.0", "54.5"}, "129.5"},
		{[]json.Number{"75.0", "60.0"}, "135.0"},
		{[]json.Number{"1", "2"}, "3"},
		{[]json.Number{"-4", "1"}, "-3"},
		{[]json.Number{"1e2"}, "100.0"},
		{[]json.Number{"0.1", "0.2"}, "0.30000000000000004"},
		{[]json.Number{"1e16"}, "1e+16"},
		{[]json.Number{"1.5e16"}, "1.5e+16"},
		{[]json.Number{"1e15"}, "1000000000000000.0"},
		{[]json.Number{"0.0001"}, "0.0001"},
		{[]json.Number{"0.00001"}, "1e-05"},
		{[]json.Number{"1.5e-7"}, "1.5e-07"},
		{[]json.Number{"-2.5"}, "-2.5"},
		{[]json.Number{"0.0"}, "0.0"},
		{[]json.Number{"123456789.125"}, "123456789.125"},
		{[]json.Number{"1.2345678901234568e17"}, "1.2345678901234568e+17"},
		{[]json.Number{"1e300", "1e300"}, "2e+300"},
	}
	for _, tt := range tests {
		sum := 0.0
		for _, a := range tt.addends {
			n, _ := asNumber(a)
			sum += n
		}
		if got := formatSum(sum, tt.addends); got != tt.want {
			t.Errorf("formatSum(%v) = %s, want %s", tt.addends, got, tt.want)
		}
	}
}

// TestWordingsComplete: every kind of failure has all three texts, and
// every placeholder a text uses is one the table documents.
func TestWordingsComplete(t *testing.T) {
	known := []string{"at", "field", "value", "sum", "target", "allowed", "first", "range", "what", "member", "count"}
	for kind, w := range wordings {
		for _, text := range []string{w.expected, w.found, w.detail} {
			if text == "" {
				t.Errorf("%s has an empty text: %+v", kind, w)
			}
			rest := text
			for {
				_, after, ok := strings.Cut(rest, "{")
				if !ok {
					break
				}
				name, tail, _ := strings.Cut(after, "}")
				found := false
				for _, k := range known {
					found = found || k == name
				}
				if !found {
					t.Errorf("%s uses an undocumented placeholder {%s}", kind, name)
				}
				rest = tail
			}
		}
	}
}

// TestPythonFloat: pythonFloat is Python's repr at the edges of its forms.
func TestPythonFloat(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1e-4, "0.0001"}, {-1e-5, "-1e-05"},
		{9999999999999998, "9999999999999998.0"}, {-1e16, "-1e+16"}, {5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"}, {0.5, "0.5"}, {-123.25, "-123.25"},
	} {
		if got := pythonFloat(tt.f); got != tt.want {
			t.Errorf("pythonFloat(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}
