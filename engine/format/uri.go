package format

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// validURI checks the grammar of RFC 3986 (iri: RFC 3987). With ref, a
// relative reference is allowed too; without, a scheme is required.
// Components are checked character by character; hosts are checked only as
// RFC 3986 reg-names (so http://999.999.999.999/ is valid), except IP
// literals in brackets, which must be real IPv6 addresses or IPvFuture.
func validURI(s string, iri, ref bool) bool {
	rest, fragment, hasFragment := strings.Cut(s, "#")
	if hasFragment && !validChars(fragment, ":@/?", iri, false) {
		return false
	}
	rest, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && !validChars(query, ":@/?", iri, true) {
		return false
	}
	// A colon before any slash ends a scheme; a relative reference may not
	// have one in its first segment (path-noscheme).
	firstSegment, _, _ := strings.Cut(rest, "/")
	if colon := strings.IndexByte(firstSegment, ':'); colon >= 0 {
		if !scheme.MatchString(rest[:colon]) {
			return false
		}
		rest = rest[colon+1:]
	} else if !ref {
		return false
	}
	if hier, ok := strings.CutPrefix(rest, "//"); ok {
		authority, path, _ := strings.Cut(hier, "/") // path: the rest, less its leading /
		return validAuthority(authority, iri) && validChars(path, ":@/", iri, false)
	}
	return validChars(rest, ":@/", iri, false)
}

// scheme is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
var scheme = regexp.MustCompile(`^[A-Za-z][-A-Za-z0-9+.]*$`)

// validAuthority checks [ userinfo "@" ] host [ ":" port ].
func validAuthority(s string, iri bool) bool {
	if userinfo, host, ok := strings.Cut(s, "@"); ok {
		if !validChars(userinfo, ":", iri, false) {
			return false
		}
		s = host
	}
	host, port := s, ""
	if i := strings.LastIndexByte(s, ':'); i > strings.LastIndexByte(s, ']') {
		host, port = s[:i], s[i+1:]
	}
	if strings.TrimLeft(port, "0123456789") != "" {
		return false
	}
	if literal, ok := strings.CutPrefix(host, "["); ok {
		literal, ok = strings.CutSuffix(literal, "]")
		return ok && (validIPv6(literal) || ipFuture.MatchString(literal))
	}
	return validChars(host, "", iri, false)
}

// ipFuture is RFC 3986's IPvFuture: "v" 1*HEXDIG "." 1*( unreserved /
// sub-delims / ":" ).
var ipFuture = regexp.MustCompile(`^[vV][0-9A-Fa-f]+\.[-A-Za-z0-9._~!$&'()*+,;=:]+$`)

// validChars reports whether s consists of unreserved characters,
// sub-delims, percent-encoded octets and the ASCII characters in extra;
// with iri also of RFC 3987 ucschar, and with private of iprivate.
func validChars(s, extra string, iri, private bool) bool {
	return validEncoded(s, func(c byte) bool {
		return isUnreserved(c) || isSubDelim(c) || strings.IndexByte(extra, c) >= 0
	}, func(r rune) bool { return iri && (isUcschar(r) || private && isIprivate(r)) })
}

// validEncoded reports whether s consists of percent-encoded octets, ASCII
// characters that ascii accepts and other code points that other accepts
// (invalid UTF-8 is offered to it as U+FFFD).
func validEncoded(s string, ascii func(byte) bool, other func(rune) bool) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 3
		case c < utf8.RuneSelf:
			if !ascii(c) {
				return false
			}
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !other(r) {
				return false
			}
			i += size
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

// isUcschar is RFC 3987's ucschar: the non-ASCII characters an IRI may hold
// outside the query.
func isUcschar(r rune) bool {
	switch {
	case r >= 0xa0 && r <= 0xd7ff, r >= 0xf900 && r <= 0xfdcf, r >= 0xfdf0 && r <= 0xffef:
		return true
	case r >= 0x10000 && r <= 0xdffff, r >= 0xe1000 && r <= 0xefffd:
		// Each plane's last two code points (U+xFFFE, U+xFFFF) are excluded.
		return r&0xffff <= 0xfffd
	}
	return false
}

// isIprivate is RFC 3987's iprivate, allowed in the query only.
func isIprivate(r rune) bool {
	return r >= 0xe000 && r <= 0xf8ff || r >= 0xf0000 && r <= 0xffffd || r >= 0x100000 && r <= 0x10fffd
}
