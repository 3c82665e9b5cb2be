package format

import (
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
	n := localPartLength(s, intl)
	if n == 0 || n > maxLocalPart || n >= len(s) || s[n] != '@' {
		return false
	}
	domain := s[n+1:]
	if literal, ok := strings.CutPrefix(domain, "["); ok {
		literal, ok = strings.CutSuffix(literal, "]")
		if !ok {
			return false
		}
		if v6, isV6 := strings.CutPrefix(literal, "IPv6:"); isV6 {
			return validIPv6(v6)
		}
		return validIPv4(literal)
	}
	if intl {
		return validIDNHostname(norm.NFC.String(domain))
	}
	return validHostname(domain)
}

// localPartLength returns the length in bytes of the local part s starts
// with, or 0 when it does not start with one.
func localPartLength(s string, intl bool) int {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"':
				return i + 1
			case c == '\\':
				if i+1 >= len(s) || s[i+1] < ' ' || s[i+1] > '~' {
					return 0
				}
				i++
			case c >= utf8.RuneSelf:
				if !intl {
					return 0
				}
			case c < ' ' || c > '~':
				return 0
			}
		}
		return 0
	}
	// Dot-string: atoms of atext joined by single dots.
	i := 0
	for {
		start := i
		for i < len(s) && (isAtext(s[i]) || intl && s[i] >= utf8.RuneSelf) {
			i++
		}
		if i == start {
			return 0
		}
		if i >= len(s) || s[i] != '.' {
			return i
		}
		i++
	}
}

// isAtext reports RFC 5322 atext.
func isAtext(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}
