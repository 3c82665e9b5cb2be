package ijson

import "testing"

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
