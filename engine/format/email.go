package format

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of RFC 5321 §4.5.3.1.
const (
	maxLocalPart = 64  // octets
	maxMailbox   = 254 // octets: a 256-octet path less its angle brackets
)

// validEmail checks an RFC 5321 Mailbox: a dot-string or quoted-string
// local part, "@", and a host name or an IPv4 / IPv6 address literal. With
// intl (idn-email, RFC 6531) the local part may hold any non-ASCII
// character and the domain is an internationalized host name, compared in
// NFC.
func validEmail(s string, intl bool) bool {
	if len(s) > maxMailbox || !utf8.ValidString(s) {
		return false
	}
	re := localPart
	if intl {
		re = localPartIntl
	}
	n := len(re.FindString(s)) // the local part and its "@"
	if n == 0 || n-1 > maxLocalPart {
		return false
	}
	domain := s[n:]
	if literal, ok := strings.CutPrefix(domain, "["); ok {
		literal, ok = strings.CutSuffix(literal, "]")
		if v6, isV6 := strings.CutPrefix(literal, "IPv6:"); isV6 {
			return ok && validIPv6(v6)
		}
		return ok && validIPv4(literal)
	}
	if intl {
		return validIDNHostname(norm.NFC.String(domain))
	}
	return validHostname(domain)
}

// localPart and localPartIntl match an RFC 5321 Local-part and the "@"
// after it: a dot-string (atoms of atext joined by single dots) or a
// quoted-string (printable ASCII, " and \ only escaped). For idn-email any
// non-ASCII character is atext and qtext too (RFC 6531).
var localPart, localPartIntl = localPartPattern(""), localPartPattern(`\x{80}-\x{10ffff}`)

func localPartPattern(nonASCII string) *regexp.Regexp {
	atext := "-a-zA-Z0-9!#$%&'*+/=?^_`{|}~" + nonASCII
	qtext := ` !#-\[\]-~` + nonASCII
	return regexp.MustCompile(`^(?:[` + atext + `]+(?:\.[` + atext + `]+)*|"(?:[` + qtext + `]|\\[ -~])*")@`)
}
