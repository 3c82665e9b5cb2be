package format

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/secure/bidirule"
	"golang.org/x/text/unicode/bidi"
)

// registration checks a U-label with x/net/idna's UTS #46 tables, which
// refuse what RFC 5892 calls unassigned, unstable (category B) and
// ignorable (category C), and with its checks of NFC, of a leading
// combining mark and of the CONTEXTJ rules. Its hyphen check counts bytes,
// not characters, so uLabelToA makes its own.
var registration = idna.New(idna.ValidateForRegistration(), idna.CheckJoiners(true), idna.CheckHyphens(false))

// allowed reports whether runes[i] may stand in a U-label: its IDNA2008
// derived property (RFC 5892) is PVALID, CONTEXTJ (registration checks the
// joiners' rules), or CONTEXTO with its rule (appendix A) met. UTS #46 keeps
// valid the symbols and punctuation IDNA2008 disallows (its NV8 and XV8), so
// General_Category decides what the exceptions and categories below leave.
func allowed(runes []rune, i int) bool {
	r, before, after := runes[i], rune(-1), rune(-1)
	if i > 0 {
		before = runes[i-1]
	}
	if i+1 < len(runes) {
		after = runes[i+1]
	}
	switch {
	case r == 0x00df, r == 0x03c2, r == 0x06fd, r == 0x06fe, r == 0x0f0b, r == 0x3007: // §2.6: PVALID
		return true
	case r == 0x00b7: // CONTEXTO MIDDLE DOT: between two l
		return before == 'l' && after == 'l'
	case r == 0x0375: // CONTEXTO GREEK LOWER NUMERAL SIGN: followed by Greek
		return unicode.Is(unicode.Greek, after)
	case r == 0x05f3 || r == 0x05f4: // CONTEXTO HEBREW GERESH, GERSHAYIM: preceded by Hebrew
		return unicode.Is(unicode.Hebrew, before)
	case r == 0x30fb: // CONTEXTO KATAKANA MIDDLE DOT (script Common): with Hiragana, Katakana or Han
		return slices.ContainsFunc(runes, func(c rune) bool {
			return unicode.In(c, unicode.Hiragana, unicode.Katakana, unicode.Han)
		})
	case r >= 0x0660 && r <= 0x0669: // CONTEXTO ARABIC-INDIC DIGITS: not with extended ones
		return !slices.ContainsFunc(runes, func(c rune) bool { return c >= 0x06f0 && c <= 0x06f9 })
	case r >= 0x06f0 && r <= 0x06f9: // CONTEXTO EXTENDED ARABIC-INDIC DIGITS: not with plain ones
		return !slices.ContainsFunc(runes, func(c rune) bool { return c >= 0x0660 && c <= 0x0669 })
	case r == 0x0640, r == 0x07fa, r == 0x302e, r == 0x302f, r >= 0x3031 && r <= 0x3035, r == 0x303b: // §2.6: DISALLOWED
		return false
	case r == 0x200c || r == 0x200d: // category H: CONTEXTJ
		return true
	case r >= 0x20d0 && r <= 0x20ff, r >= 0x1d100 && r <= 0x1d24f: // category D: ignorable blocks
		return false
	case r >= 0x1100 && r <= 0x11ff, r >= 0xa960 && r <= 0xa97c, r >= 0xd7b0 && r <= 0xd7c6,
		r >= 0xd7cb && r <= 0xd7fb: // category I: old Hangul jamo
		return false
	}
	return r == '-' || unicode.In(r, unicode.Ll, unicode.Lu, unicode.Lo, unicode.Nd, unicode.Lm, unicode.Mn, unicode.Mc)
}

// uLabelToA checks a U-label against IDNA2008 (RFC 5891 §5.4, without the
// Bidi rule, which needs the whole name): NFC, hyphen rules, no leading
// combining mark, and every code point PVALID or allowed by its contextual
// rule (RFC 5892 appendix A). It returns the label's A-label.
func uLabelToA(label string) (string, bool) {
	runes := []rune(label)
	if len(runes) == 0 || runes[0] == '-' || runes[len(runes)-1] == '-' ||
		len(runes) >= 4 && runes[2] == '-' && runes[3] == '-' {
		return "", false
	}
	for i := range runes {
		if !allowed(runes, i) {
			return "", false
		}
	}
	alabel, err := registration.ToASCII(label)
	return alabel, err == nil
}

// validBidi applies the Bidi rule of RFC 5893 to the labels (U-labels) of a
// name: when any label holds a right-to-left character, every label must
// satisfy the rule.
func validBidi(labels []string) bool {
	rtl := slices.ContainsFunc(labels, func(l string) bool {
		return bidirule.DirectionString(l) == bidi.RightToLeft
	})
	return !rtl || !slices.ContainsFunc(labels, func(l string) bool { return !bidirule.ValidString(l) })
}

// isASCII reports whether s holds only ASCII.
func isASCII(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
}

// decodeALabel turns an A-label into its U-label, checking that it is
// canonical Punycode of a valid U-label with at least one non-ASCII
// character (RFC 5891 §5.4 applied to A-labels). idna.Punycode only
// decodes: re-encoding must give the label back, which rules out
// surrogates, which it decodes to U+FFFD, and every other non-canonical
// spelling.
func decodeALabel(label string) (string, bool) {
	alabel := "xn--" + strings.ToLower(label[4:])
	u, err := idna.Punycode.ToUnicode(alabel)
	if err != nil || isASCII(u) {
		return "", false
	}
	again, ok := uLabelToA(u)
	return u, ok && again == alabel
}
