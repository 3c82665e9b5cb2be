package format

import (
	"strings"
	"unicode/utf8"
)

// validURITemplate checks the RFC 6570 grammar (level 4): literals and
// {expressions} with an optional operator, one or more varspecs separated
// by commas, each a varname with an optional :prefix (1-9999) or * explode.
// The operators RFC 6570 reserves for future use (= , ! @ |) are refused.
func validURITemplate(s string) bool {
	for s != "" {
		open := strings.IndexByte(s, '{')
		literals := s
		if open >= 0 {
			literals = s[:open]
		}
		if !validTemplateLiterals(literals) {
			return false
		}
		if open < 0 {
			return true
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 || !validExpression(s[open+1:open+end]) {
			return false
		}
		s = s[open+end+1:]
	}
	return true
}

// validTemplateLiterals checks the text between expressions: any character
// but controls, space, " % < > \ ^ ` { | }, and percent-encoded octets.
// The apostrophe is allowed, as the JSON Schema suite expects.
func validTemplateLiterals(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 3
			continue
		case c < utf8.RuneSelf:
			if c <= ' ' || c == 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isUcschar(r) && !isIprivate(r) {
			return false
		}
		i += size
	}
	return true
}

// validExpression checks what stands between { and }.
func validExpression(s string) bool {
	if s != "" && strings.IndexByte("+#./;?&", s[0]) >= 0 {
		s = s[1:]
	}
	for _, spec := range strings.Split(s, ",") {
		name := spec
		if n, ok := strings.CutSuffix(spec, "*"); ok {
			name = n
		} else if n, prefix, ok := strings.Cut(spec, ":"); ok {
			if len(prefix) < 1 || len(prefix) > 4 || prefix[0] == '0' || countDigits(prefix) != len(prefix) {
				return false
			}
			name = n
		}
		if !validVarname(name) {
			return false
		}
	}
	return true
}

// validVarname checks varchar *( ["."] varchar ), where a varchar is a
// letter, digit, underscore or percent-encoded octet.
func validVarname(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case !isAlpha(c) && !isDigit(c) && c != '_' && c != '.':
			return false
		}
	}
	return true
}
