package mcpserver

import (
	"strings"
	"testing"
)

func TestNestedPast(t *testing.T) {
	for _, tt := range []struct {
		data  string
		limit int
		want  bool
	}{
		{`1`, 1, false},
		{`[]`, 1, false},
		{`[[]]`, 1, true},
		{`{"a":[1,{"b":2}]}`, 3, false},
		{`{"a":[1,{"b":2}]}`, 2, true},
		{`[],[[[]]]`, 1, false},                   // only the first value counts
		{`["[[[[", "\"[[[["]`, 1, false},          // brackets in strings do not
		{`["\\", [[]]]`, 2, true},                 // an escaped backslash ends no string
		{strings.Repeat("[", 100_000), 128, true}, // unclosed
		{strings.Repeat("[", 128) + strings.Repeat("]", 128), 128, false},
		{strings.Repeat("[", 129) + "x", 128, true}, // malformed past the limit
		{`[1}}}}}`, 1, false}, // malformed before it
		{`[x,[[[[]]]]]`, 2, false},
	} {
		if got := nestedPast([]byte(tt.data), tt.limit); got != tt.want {
			t.Errorf("nestedPast(%.40q, %d) = %v, want %v", tt.data, tt.limit, got, tt.want)
		}
	}
}
