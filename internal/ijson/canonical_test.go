package ijson

import (
	"strings"
	"testing"
)

func TestCompareUTF16(t *testing.T) {
	// Each list is in RFC 8785 order.
	ordered := []string{"", "\x00", "A", "a", "ab", "é", "\u00ff", "\u4e00", "\U00010000", "\U0001F600", "\U0010FFFF", "\ue000", "\uffff"}
	for i, a := range ordered {
		for j, b := range ordered {
			got := compareUTF16([]byte(a), []byte(b))
			if (got < 0) != (i < j) || (got == 0) != (i == j) {
				t.Errorf("compareUTF16(%q, %q) = %d, want the sign of %d", a, b, got, i-j)
			}
		}
	}
}

func TestAppendCanonical(t *testing.T) {
	big := `{"z":"` + strings.Repeat("x", 100<<10) + `","a":1}`
	tests := []struct {
		name, in string
		depth    int
		want     string // "" for an error
	}{
		{"members sorted", `{"b":[1.0,-0,1e21],"a":{}}`, 0, `{"a":{},"b":[1,0,1e+21]}`},
		{"large text, memory not kept", big, 0, `{"a":1,"z":"` + strings.Repeat("x", 100<<10) + `"}`},
		{"after a large text", `{"y":2,"x":1}`, 0, `{"x":1,"y":2}`},
		{"duplicate key", `{"a":1,"a":2}`, 0, ""},
		{"trailing data", `1 2`, 0, ""},
		{"depth counted from the level given", strings.Repeat("[", MaxCanonicalDepth) + strings.Repeat("]", MaxCanonicalDepth), 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendCanonical([]byte("prefix:"), []byte(tt.in), tt.depth)
			if tt.want == "" {
				if err == nil || string(got) != "prefix:" {
					t.Fatalf("AppendCanonical(%.40q) = %.60q, %v; want an error and the prefix alone", tt.in, got, err)
				}
				return
			}
			if err != nil || string(got) != "prefix:"+tt.want {
				t.Fatalf("AppendCanonical(%.40q) = %.60q, %v; want %.60q", tt.in, got, err, "prefix:"+tt.want)
			}
		})
	}
}
