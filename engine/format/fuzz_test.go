package format

import (
	"maps"
	"slices"
	"testing"
)

// FuzzValid checks that no format name and string panic Valid, and that
// the stricter formats never accept what their wider forms refuse.
func FuzzValid(f *testing.F) {
	// A valid instance of the first format must be one of the second.
	implied := [][2]string{
		{"uri", "uri-reference"},
		{"uri", "iri"},
		{"iri", "iri-reference"},
		{"uri-reference", "iri-reference"},
		{"hostname", "idn-hostname"},
		{"email", "idn-email"},
	}
	names := slices.Sorted(maps.Keys(checkers))
	seeds := []string{
		"2024-02-29", "23:59:60Z", "P1Y2M", "a@b.c", `"a b"@[IPv6:::1]`, "xn--bcher-kva.de",
		"실례.테스트", "::ffff:1.2.3.4", "http://[v1.x]:80/p?q#f", "{+a,b:3}", "/a~0", "0#",
		"01234567-89ab-cdef-0123-456789abcdef", `^\p{L}+(?<=x)$`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, pick uint8, s string) {
		name := names[int(pick)%len(names)]
		Valid(name, s)
		for _, pair := range implied {
			if Valid(pair[0], s) && !Valid(pair[1], s) {
				t.Errorf("Valid(%q, %q) = true but Valid(%q, %q) = false", pair[0], s, pair[1], s)
			}
		}
		if len(s) > 11 && Valid("date-time", s) && (!Valid("date", s[:10]) || !Valid("time", s[11:])) {
			t.Errorf("Valid(date-time, %q) = true but its date or time is invalid", s)
		}
	})
}
