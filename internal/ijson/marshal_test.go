package ijson

import (
	"encoding/json"
	"testing"
)

func TestAppendMarshalString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", `""`},
		{"plain", "seller-7", `"seller-7"`},
		{"quotes and backslashes", `a "b" \c`, `"a \"b\" \\c"`},
		{"html", "<a href='x'>&</a>", `"\u003ca href='x'\u003e\u0026\u003c/a\u003e"`},
		{"controls", "\b\f\n\r\t\x00\x1f\x7f", `"\b\f\n\r\t\u0000\u001f` + "\x7f" + `"`},
		{"invalid utf-8", "a\xffb\xc3", `"a\ufffdb\ufffd"`},
		{"line separators", "x\u2028y\u2029z", `"x\u2028y\u2029z"`},
		{"non-ascii kept", "héé ✓ 𝄞", `"héé ✓ 𝄞"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendMarshalString([]byte("prefix:"), tc.in))
			if got != "prefix:"+tc.want {
				t.Errorf("AppendMarshalString(%q) = %s, want %s", tc.in, got, tc.want)
			}
			if want, _ := json.Marshal(tc.in); "prefix:"+string(want) != got {
				t.Errorf("AppendMarshalString(%q) = %s, json.Marshal = %s", tc.in, got, want)
			}
		})
	}
}

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"html kept", map[string]string{"a": "<b>&</b>"}, `{"a":"<b>&</b>"}`},
		{"compact, no newline", []int{1, 2}, `[1,2]`},
		{"struct tags", struct {
			A string `json:"a,omitempty"`
			B int    `json:"b"`
		}{B: 3}, `{"b":3}`},
		{"line separators escaped", "x\u2028y", `"x\u2028y"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil || string(got) != tc.want {
				t.Errorf("Marshal(%v) = %s, %v, want %s", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("Marshal(func) succeeded, want an error")
	}
}
