package ijson

import (
	"testing"
)

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
