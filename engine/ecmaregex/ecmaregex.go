// Package ecmaregex translates ECMA-262 regular expressions, the dialect JSON
// Schema's pattern and patternProperties use, into Go's RE2 syntax.
//
// Patterns are read as ECMA-262 reads them with the u flag, which is what
// the JSON Schema test suite expects: \d and \w are ASCII only, \s is
// ECMA-262's white space (including U+00A0, U+FEFF and the Unicode space
// separators) plus the line terminators, ^ and $ anchor at the ends of the
// input only, . matches any code point but \n, \r, U+2028 and U+2029,
// \u{…} and surrogate-pair escapes name one code point, and \p{…} accepts
// ECMA-262's General_Category, Script and binary property names. ES2025
// modifier groups such as (?i:…) are understood, with ECMA-262's case
// folding (simple case folding, as RE2's). One difference remains: under i,
// ECMA-262's \b and \B count U+017F and U+212A as word characters, RE2's
// do not.
//
// The u flag makes the syntax strict, as in every engine that applies it
// (ajv among them): escapes are limited to the syntax characters and / (so
// \a and, outside a class, \- are errors), a lone {, } or ] is an error,
// and \k and decimal escapes must name existing groups. A lone surrogate
// escape such as \uD83D matches nothing, since Go strings cannot hold one.
//
// RE2 runs in linear time, so a translated pattern cannot be used for ReDoS.
// Constructs that need backtracking (look-around, back-references) or that
// RE2 cannot express otherwise are reported as ErrUnsupported.
//
// RE2's program grows with repetition counts, which multiply (x{1,1000}
// is a thousand copies of x), so a short pattern can take megabytes and
// milliseconds to compile. Prepare measures a pattern's program before
// anything is compiled ([Program.Size]) and refuses one over a limit with
// ErrTooLarge, so a caller can bound and charge compilation.
//
//	re, err := ecmaregex.Compile(`^\w+$`)
//	if errors.Is(err, ecmaregex.ErrUnsupported) {
//		// valid ECMA-262, but not runnable with RE2
//	}
//	ok := re.MatchString("Ärger") // false: \w is ASCII only
package ecmaregex

import (
	"errors"
	"fmt"
	"math"
	"regexp"
)

// ErrUnsupported reports an ECMA-262 construct that RE2 cannot express:
// look-around, back-references, repetition counts above 1000, and the few
// Unicode properties Go's tables do not carry.
var ErrUnsupported = errors.New("pattern uses a construct RE2 cannot run")

// ErrTooLarge reports a pattern whose RE2 program is too large: over the
// limit given to Prepare, or over RE2's own limits (a repetition count
// above 1000, nested repetitions whose counts multiply past 1000, groups
// nested more than 1000 deep). An error wrapping it also wraps
// ErrUnsupported: the pattern is valid ECMA-262 that will not be run.
var ErrTooLarge = errors.New("pattern is too large")

// ErrSyntax reports a pattern that is not a valid ECMA-262 regular
// expression (with the u flag).
var ErrSyntax = errors.New("invalid ECMA-262 regular expression")

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

func tooLargef(format string, args ...any) error {
	return fmt.Errorf("%w: %w: "+format, append([]any{ErrUnsupported, ErrTooLarge}, args...)...)
}

// Compile translates the ECMA-262 pattern p and compiles it with RE2. The
// error wraps ErrSyntax when p is not valid ECMA-262 and ErrUnsupported
// when it is valid but has no RE2 form. It bounds the program only by
// RE2's own limits (up to millions of instructions): a caller compiling
// patterns it did not write uses Prepare with a limit.
func Compile(p string) (*regexp.Regexp, error) {
	prog, err := Prepare(p, math.MaxInt)
	if err != nil {
		return nil, err
	}
	return prog.Compile()
}

// Translate returns the RE2 syntax equivalent to the ECMA-262 pattern p,
// with the errors of Compile.
func Translate(p string) (string, error) {
	ps := &parser{src: []rune(p)}
	if err := ps.disjunction(); err != nil {
		return "", err
	}
	if !ps.eof() {
		// disjunction only stops early at a ')' it did not open.
		return "", ps.errorf("unmatched )")
	}
	if err := ps.checkNames(); err != nil {
		return "", err
	}
	if ps.unsupported != nil {
		return "", ps.unsupported
	}
	return ps.out.String(), nil
}

// Valid reports whether p is a syntactically valid ECMA-262 regular
// expression (with the u flag). Look-around and back-references are valid
// here even though Compile cannot run them; this is the check of JSON
// Schema's regex format.
func Valid(p string) bool {
	_, err := Translate(p)
	return !errors.Is(err, ErrSyntax)
}
