package format

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxNameLength is the longest domain name in its ASCII form, without a
// trailing dot (RFC 1034 §3.1: 255 octets on the wire).
const maxNameLength = 253

// maxLabelLength is the longest label, in octets of its ASCII form.
const maxLabelLength = 63

// validHostname checks an RFC 1123 host name: dot-separated labels of
// letters, digits and inner hyphens, 1-63 characters each, 253 in all, no
// trailing dot. Labels starting with xn-- must be valid A-labels (RFC 5890):
// canonical Punycode of an IDNA2008 U-label, and the whole name must then
// follow the Bidi rule. These are the rules of idn-hostname for ASCII names.
func validHostname(s string) bool { return isASCII(s) && validIDNHostname(s) }

// ldhLabel is letters, digits and hyphens, not at either end.
var ldhLabel = regexp.MustCompile(`^[A-Za-z0-9](?:[-A-Za-z0-9]*[A-Za-z0-9])?$`)

// validIDNHostname checks an internationalized host name (RFC 5890 §2.3.2.3):
// labels separated by any of the four IDNA full stops, each an ASCII LDH
// label, a valid A-label, or a valid IDNA2008 U-label whose A-label fits 63
// octets; the name's ASCII form fits 253 octets, and the Bidi rule holds.
func validIDNHostname(s string) bool {
	// Every code point takes at least one octet of the ASCII form, so
	// longer input can be refused before any label work.
	if s == "" || utf8.RuneCountInString(s) > maxNameLength {
		return false
	}
	labels := splitLabels(s)
	ulabels := make([]string, 0, len(labels))
	total := len(labels) - 1 // the dots
	for _, l := range labels {
		alabel := l
		switch {
		case l == "":
			return false
		case !isASCII(l): // registration refuses an A-label over 63 octets
			var ok bool
			if alabel, ok = uLabelToA(l); !ok {
				return false
			}
		case len(l) > maxLabelLength || !ldhLabel.MatchString(l):
			return false
		case len(l) >= 4 && strings.EqualFold(l[:4], "xn--"): // the ACE prefix, in any case
			u, ok := decodeALabel(l)
			if !ok {
				return false
			}
			l = u
		}
		total += len(alabel)
		ulabels = append(ulabels, l)
	}
	return total <= maxNameLength && validBidi(ulabels)
}

// splitLabels splits s at every full stop IDNA2008 treats as a dot
// (RFC 3490 §3.1: . U+3002 U+FF0E U+FF61), keeping empty labels.
func splitLabels(s string) []string {
	dotted := strings.Map(func(r rune) rune {
		if r == '\u3002' || r == '\uff0e' || r == '\uff61' {
			return '.'
		}
		return r
	}, s)
	return strings.Split(dotted, ".")
}
