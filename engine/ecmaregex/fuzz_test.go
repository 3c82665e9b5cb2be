package ecmaregex

import (
	"errors"
	"math"
	"regexp/syntax"
	"testing"
)

// FuzzCompile checks that no pattern panics the translator, that Compile and
// Valid agree, that every translation is a well-formed RE2 pattern, and
// that Prepare's size counts at least every instruction of the program.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		"^abc$", `\d+\s*\w`, `[\S\p{L}-]`, `(?<n>a)\k<n>`, `(?<=a)b`, `\u{1F600}\uD83D\uDC32`,
		`a{2,5}?`, `(?i:a(?-i:b))`, `[^]`, `\cA`, `\p{Script=Greek}`, `((((a))))|b`, `[\x41-\u{10FFFF}]`,
	} {
		f.Add(seed, "abc")
	}
	f.Fuzz(func(t *testing.T, pattern, input string) {
		src, translateErr := Translate(pattern)
		valid := Valid(pattern)
		if translateErr != nil {
			if !errors.Is(translateErr, ErrSyntax) && !errors.Is(translateErr, ErrUnsupported) {
				t.Fatalf("Translate(%q) error %v wraps neither ErrSyntax nor ErrUnsupported", pattern, translateErr)
			}
			if valid != !errors.Is(translateErr, ErrSyntax) {
				t.Fatalf("Valid(%q) = %v, but Translate error is %v", pattern, valid, translateErr)
			}
			return
		}
		if !valid {
			t.Fatalf("Translate(%q) succeeded but Valid is false", pattern)
		}
		if _, err := syntax.Parse(src, syntax.Perl); err != nil {
			var se *syntax.Error
			if !errors.As(err, &se) || (se.Code != syntax.ErrInvalidRepeatSize && se.Code != syntax.ErrNestingDepth && se.Code != syntax.ErrLarge) {
				t.Fatalf("Translate(%q) = %q, which RE2 rejects: %v", pattern, src, err)
			}
		}
		re, err := Compile(pattern)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Compile(%q) error %v after a successful translation", pattern, err)
			}
			return
		}
		re.MatchString(input)
		prog, err := Prepare(pattern, math.MaxInt)
		if err != nil {
			t.Fatalf("Prepare(%q) = %v after Compile succeeded", pattern, err)
		}
		parsed, _ := syntax.Parse(src, syntax.Perl)
		if compiled, err := syntax.Compile(parsed.Simplify()); err == nil && prog.Size() < len(compiled.Inst)-3 {
			t.Fatalf("Prepare(%q).Size() = %d, under the program's %d instructions", pattern, prog.Size(), len(compiled.Inst))
		}
	})
}
