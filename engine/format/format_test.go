package format

import (
	"fmt"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		format, s string
		want      bool
	}{
		// Dates and times.
		{"date", "2024-02-29", true},
		{"date", "2023-02-29", false},
		{"date", "2000-02-29", true},
		{"date", "1900-02-29", false},
		{"date", "2024-1-01", false},
		{"date-time", "2024-01-01T00:00:00+23:59", true},
		{"date-time", "2024-01-01T00:00:00.Z", false},
		{"date-time", "2024-01-01 00:00:00Z", false},
		{"date-time", "2024-12-31T23:59:60Z", true},
		{"date-time", "2024-12-31T23:59:60+01:00", false},
		{"date-time", "2024-12-31T", false},
		{"time", "23:59:60.5Z", true},
		{"time", "00:59:60+01:00", true},
		{"time", "12:00:00+1:00", false},
		{"time", "12:00:00.123456789012345678901234567890Z", true},
		{"time", "1:00:00Z", false},
		{"time", "12:00:00,5Z", false},
		{"time", "24:00:00Z", false},
		{"time", "12:00:00+24:00", false},
		{"time", "12:00:00-23:60", false},
		{"time", "22:59:60-01:00", true},
		{"time", "23:59:60z", true},
		{"time", "23:58:60Z", false},
		{"time", "12:00:00Zz", false},
		{"duration", "P1Y2M3DT4H5M6S", true},
		{"duration", "P3W", true},
		{"duration", "PT", false},
		{"duration", "P1DT", false},
		{"duration", "PT1S1M", false},
		{"duration", "P1W2D", false},
		{"duration", "P1M1Y", false},
		{"duration", "PW", false},
		// E-mail.
		{"email", "a@b", true},
		{"email", "a@b..c", false},
		{"email", `"a\"b"@example.com`, true},
		{"email", `"a"b@example.com`, false},
		{"email", `"unterminated@example.com`, false},
		{"email", `"a b\\"@example.com`, true}, // space and an escaped backslash
		{"email", "\"a\x01\"@example.com", false},
		{"email", "\"a\x7f\"@example.com", false},
		{"email", "\"a\\\x01\"@example.com", false}, // an escaped control character
		{"email", `"ä"@example.com`, false},
		{"idn-email", `"ä"@example.com`, true},
		{"email", "a..b@example.com", false},
		{"email", ".a@example.com", false},
		{"email", "a.@example.com", false},
		{"email", "@example.com", false},
		{"email", `""@example.com`, true},
		{"email", "a@", false},
		{"email", "a@[IPv6:1::1]", true},
		{"email", "a@[1.2.3.4", false},
		{"email", "a@[IPv6:1::1", false},
		{"email", "a@[IPv6:1.2.3.4]", false},
		{"email", "a@[1::1]", false},
		{"email", strings.Repeat("a", 64) + "@example.com", true},
		{"email", strings.Repeat("a", 65) + "@example.com", false},
		{"email", "ä@example.com", false},
		{"email", "a@bücher.de", false},
		{"email", "a@xn--bcher-kva.de", true},
		{"email", "a@-x.com", false},
		{"idn-email", "ä@example.com", true},
		{"idn-email", "a@bücher.de", true},
		{"idn-email", "a@b\u0308cher.de", true}, // NFD domain, compared in NFC
		{"idn-email", "a@☃.com", false},
		{"idn-email", "a@[127.0.0.1]", true},
		// Host names.
		{"hostname", "r3---sn-apo3qvuoxuxbt-j5pe.googlevideo.com", true},
		{"hostname", "Example.COM", true},
		{"hostname", "xn--bcher-kva.de", true},
		{"hostname", "XN--BCHER-KVA.de", true},
		{"hostname", "xn--bcher-kva-.de", false},
		{"hostname", "xn--n3h.com", false},             // ☃: a symbol, DISALLOWED
		{"hostname", "xn--ls8h.la", false},             // 💩: a symbol, DISALLOWED
		{"hostname", "xn--mgbh0fb.xn--kgbechtv", true}, // مثال.إختبار
		{"hostname", strings.Repeat("a.", 126) + "a", true},
		{"hostname", strings.Repeat("a.", 126) + "ab", false},
		{"hostname", "a_b.com", false},
		{"idn-hostname", "bücher.de", true},
		{"idn-hostname", "Bücher.de", false}, // U-labels hold no capitals in IDNA2008
		{"idn-hostname", "Example.COM", true},
		{"idn-hostname", "ß.de", true},
		{"idn-hostname", "\ufb00.de", false}, // ﬀ ligature: unstable under NFKC
		{"idn-hostname", "例え.テスト", true},
		{"idn-hostname", "مثال.إختبار", true},
		{"idn-hostname", "cafe\u0301.com", false}, // not NFC
		{"idn-hostname", "café.com", true},
		{"idn-hostname", "☃.com", false},
		{"idn-hostname", "a\u00adb.com", false},          // soft hyphen: default ignorable
		{"idn-hostname", "\u1100\u1161.kr", false},       // old Hangul jamo
		{"idn-hostname", "a\u20d0.com", false},           // a combining mark of an ignorable block
		{"idn-hostname", "\u13a0\u13cd\u13a6.com", true}, // Cherokee capitals: case folding keeps them
		{"idn-hostname", "\uab70.com", false},            // Cherokee small letter: folds to U+13A0
		{"idn-hostname", "\u00e9--x.com", true},          // -- at bytes 3-4, not at characters 3-4
		{"idn-hostname", "\u0628\u0660\u0628", true},
		{"idn-hostname", "a\u200cb", false}, // ZWNJ between Latin letters
		{"idn-hostname", "ab--c", true},     // an NR-LDH label like r3---sn
		{"idn-hostname", "xn--bcher-kva.de", true},
		{"idn-hostname", "a.xn--X", false},
		{"idn-hostname", "\u00fc" + strings.Repeat("a", 55) + ".de", true},  // its A-label has 63 octets
		{"idn-hostname", "\u00fc" + strings.Repeat("a", 56) + ".de", false}, // 64 octets
		// IP addresses.
		{"ipv4", "1.2.3.04", false},
		{"ipv4", "1.2.3.4", true},
		{"ipv6", "::ffff:1.2.3.4", true},
		{"ipv6", "1:2:3:4:5:6:7::", true},
		{"ipv6", "fe80::1%eth0", false},
		{"ipv6", "::1%", false},
		// URIs and IRIs.
		{"uri", "http://[v7.abc]", true},
		{"uri", "http://[v7.]", false},
		{"uri", "http://[vz.abc]", false},
		{"uri", "http://[::1%25eth0]/", false},
		{"uri", "http://[1.2.3.4]/", false},
		{"uri", "http://[::1]x/", false},
		{"uri", "http://[::1/", false},
		{"uri", "http://a:65536", true},
		{"uri", "http://a:/", true}, // port = *DIGIT
		{"uri", "http://a:8x/", false},
		{"uri", "http://[::1]:80/", true},
		{"uri", "foo:", true},
		{"uri", "a+b.c-d:x", true},
		{"uri", "http://exa mple.com", false},
		{"uri", "http://a/b%2", false},
		{"uri", "http://a/b%2g", false},
		{"uri", "http://例え.jp/", false},
		{"uri-reference", "%41:b", false},
		{"uri-reference", "a/b:c", true},
		{"uri-reference", "?", true},
		{"uri-reference", "#", true},
		{"iri", "http://例え.テスト/パス", true},
		{"iri", "http://a/\ue000", false},
		{"iri", "http://a/?\ue000", true},
		{"iri", "http://a/#\ue000", false},
		{"iri", "http://a/\ufffe", false},
		{"iri", "http://a/\U0001fffe", false},
		{"iri", "http://a/\U0001fffd", true},
		{"iri-reference", "//例え/", true},
		{"iri-reference", "\x7f", false},
		// URI templates.
		{"uri-template", "{var:30}", true},
		{"uri-template", "{var:30*}", false},
		{"uri-template", "{+path}/here", true},
		{"uri-template", "{=var}", false},
		{"uri-template", "{va r}", false},
		{"uri-template", "{a}{b}", true},
		{"uri-template", "{", false},
		{"uri-template", "{a{b}", false},
		{"uri-template", "{.a}", true},
		{"uri-template", "{a.}", false},
		{"uri-template", "{%4}", false},
		{"uri-template", "{var:0}", false},
		{"uri-template", "{var:9999}", true},
		{"uri-template", "{var:10000}", false},
		{"uri-template", "{a..b}", false},
		{"uri-template", "{;a.%41,b*,c:1}", true},
		{"uri-template", "{}", false},
		{"uri-template", "{+}", false},
		{"uri-template", "{a,}", false},
		{"uri-template", "%4", false},
		{"uri-template", "/path?q={q}&x=1", true},
		{"uri-template", "a<b", false},
		// Pointers.
		{"json-pointer", "/~01", true},
		{"json-pointer", "/a~", false},
		{"relative-json-pointer", "0+1/a", true},
		{"relative-json-pointer", "2-1#", true},
		{"relative-json-pointer", "1+01", false},
		{"relative-json-pointer", "1+", false},
		{"relative-json-pointer", "0 ", false},
		// UUIDs and regular expressions.
		{"uuid", "01234567-89ab-cdef-0123-456789ABCDEF", true},
		{"uuid", "01234567-89ab-cdef-0123-456789ABCDEG", false},
		{"regex", "(?<=a)b", true},
		{"regex", "[", false},
		{"regex", `\p{Script=Greek}`, true},
		// Unknown formats are annotations.
		{"x-unknown", "anything", true},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%q", tt.format, tt.s), func(t *testing.T) {
			if got := Valid(tt.format, tt.s); got != tt.want {
				t.Errorf("Valid(%q, %q) = %v, want %v", tt.format, tt.s, got, tt.want)
			}
		})
	}
}

func TestKnown(t *testing.T) {
	for name := range checkers {
		if !Known(name) {
			t.Errorf("Known(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"", "unknown", "Date", "int32", "binary"} {
		if Known(name) {
			t.Errorf("Known(%q) = true, want false", name)
		}
	}
}

// TestDecodeALabel holds the A-label check to RFC 3492's samples and to
// the spellings it must refuse: malformed or overflowing Punycode, labels
// that decode to ASCII, non-canonical encodings and surrogates.
func TestDecodeALabel(t *testing.T) {
	for _, tt := range []struct{ alabel, ulabel string }{
		{"xn--bcher-kva", "bücher"},
		{"XN--BCHER-KVA", "bücher"},
		{"xn--r8jz45g", "例え"},
		{"xn--tda", "ü"},
		{"xn--abc--3ra", "abc-ü"},
	} {
		if got, ok := decodeALabel(tt.alabel); !ok || got != tt.ulabel {
			t.Errorf("decodeALabel(%q) = %q, %v; want %q, true", tt.alabel, got, ok, tt.ulabel)
		}
	}
	for _, bad := range []string{
		"xn--", "xn--X", "xn--99999999999", "xn--a-é", "xn--abc-", "xn---tda",
		"xn--n3h",  // ☃ is not PVALID
		"xn--ls8h", // an emoji: not PVALID either
		"xn--tda0", // a digit too many
		"xn--bcher-kva0",
		"xn--2ug",  // U+200D alone: CONTEXTJ without its context
		"xn--ib9b", // U+D800, a surrogate
	} {
		if got, ok := decodeALabel(bad); ok {
			t.Errorf("decodeALabel(%q) = %q, true; want failure", bad, got)
		}
	}
}
