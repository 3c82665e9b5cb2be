package schema

import "testing"

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"required", "required", 0},
		{"requried", "required", 1}, {"tpye", "type", 1}, {"minimun", "minimum", 1},
		{"additionalProperites", "additionalProperties", 1}, {"unit", "not", 2}, {"notes", "not", 2},
		{"kitten", "sitting", 3}, {"ca", "abc", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, 5); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.a, tt.b, 1); tt.want > 1 && got != 2 {
			t.Errorf("editDistance(%q, %q, limit 1) = %d, want 2 (past the limit)", tt.a, tt.b, got)
		}
	}
}
