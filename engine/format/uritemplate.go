package format

import (
	"regexp"
	"strings"
)

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
		if !closed || !expressionPattern.MatchString(expression) {
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

// expressionPattern matches what stands between { and }. A varname is runs
// of varchars (letters, digits, _ and percent-encoded octets) joined by
// single dots.
var expressionPattern = func() *regexp.Regexp {
	varchars := `(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+`
	varspec := varchars + `(?:\.` + varchars + `)*(?::[1-9][0-9]{0,3}|\*)?`
	return regexp.MustCompile(`^[+#./;?&]?` + varspec + `(?:,` + varspec + `)*$`)
}()
