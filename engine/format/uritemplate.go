package format

import "strings"

// validURITemplate checks the RFC 6570 grammar (level 4): literals and
// {expressions} with an optional operator, one or more varspecs separated
// by commas, each a varname with an optional :prefix (1-9999) or * explode.
// The operators RFC 6570 reserves for future use (= , ! @ |) are refused.
func validURITemplate(s string) bool {
	for {
		literals, rest, hasExpression := strings.Cut(s, "{")
		if !validTemplateLiterals(literals) {
			return false
		}
		if !hasExpression {
			return true
		}
		expression, after, closed := strings.Cut(rest, "}")
		if !closed || !validExpression(expression) {
			return false
		}
		s = after
	}
}

// validTemplateLiterals checks the text between expressions: any character
// but controls, space, " % < > \ ^ ` { | }, and percent-encoded octets.
// The apostrophe is allowed, as the JSON Schema suite expects.
func validTemplateLiterals(s string) bool {
	return validEncoded(s, func(c byte) bool {
		return c > ' ' && c != 0x7f && strings.IndexByte("\"<>\\^`{|}", c) < 0
	}, func(r rune) bool { return isUcschar(r) || isIprivate(r) })
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
	return validEncoded(s, func(c byte) bool { return isAlpha(c) || isDigit(c) || c == '_' || c == '.' },
		func(rune) bool { return false })
}
