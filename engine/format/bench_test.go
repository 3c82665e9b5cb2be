package format

import "testing"

func BenchmarkValid(b *testing.B) {
	cases := []struct{ format, s string }{
		{"date-time", "2024-06-19T08:30:06.283185+02:00"},
		{"email", "joe.bloggs@example.com"},
		{"hostname", "www.example.com"},
		{"idn-hostname", "실례.테스트"},
		{"ipv6", "2001:db8::8a2e:370:7334"},
		{"uri", "https://example.com/a/b?c=d#e"},
		{"uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380"},
	}
	for _, c := range cases {
		b.Run(c.format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !Valid(c.format, c.s) {
					b.Fatalf("Valid(%q, %q) = false", c.format, c.s)
				}
			}
		})
	}
}
