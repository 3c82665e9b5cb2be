package ecmaregex

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

func TestCompileMatches(t *testing.T) {
	tests := []struct {
		name     string
		pattern  string
		match    []string
		nonMatch []string
	}{
		{"literal", "abc", []string{"abc", "xabcx"}, []string{"ab", "ABC"}},
		{"anchors", "^abc$", []string{"abc"}, []string{"abc\n", "\nabc", "xabc"}},
		{"dollar ignores trailing newline", "a$", []string{"a"}, []string{"a\n", "a\r\n"}},
		{"caret in alternation", "^a|b$", []string{"ax", "xb"}, []string{"xa", "bx"}},
		{"digit is ASCII", `^\d+$`, []string{"0123456789"}, []string{"\u0660", "\u09ea", "x"}},
		{"non-digit", `^\D$`, []string{"a", "\u07c0"}, []string{"5"}},
		{"word is ASCII", `^\w+$`, []string{"aZ_09"}, []string{"é", "-", "\u017f"}},
		{"non-word", `^\W$`, []string{"é", "-"}, []string{"a", "_"}},
		{"space is ECMA white space", `^\s$`,
			[]string{" ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"},
			[]string{"\u0001", "\u2013", "\u0085", "\u200b", "a"}},
		{"non-space", `^\S$`, []string{"\u0001", "\u2013", "a"}, []string{" ", "\u00a0", "\ufeff", "\u2029"}},
		{"dot excludes line terminators", "^.$", []string{"a", "\u0085", "😀"}, []string{"\n", "\r", "\u2028", "\u2029", ""}},
		{"dot is one code point", "^..$", []string{"😀😀", "ab"}, []string{"😀"}},
		{"control escapes", `^\t\n\v\f\r$`, []string{"\t\n\v\f\r"}, []string{`\t\n\v\f\r`}},
		{"control letter upper", `^\cC$`, []string{"\u0003"}, []string{`\cC`}},
		{"control letter lower", `^\cc$`, []string{"\u0003"}, []string{"c"}},
		{"nul", `^\0$`, []string{"\x00"}, []string{"0"}},
		{"hex escape", `^\x41$`, []string{"A"}, []string{"x41"}},
		{"unicode escape", `^\u00e9$`, []string{"é"}, []string{"e"}},
		{"unicode braces", `^\u{1F600}$`, []string{"😀"}, []string{"u{1F600}"}},
		{"surrogate pair escape", `^\uD83D\uDC32*$`, []string{"", "🐲", "🐲🐲"}, []string{"🐉", "D"}},
		{"literal non-BMP with star", "^🐲*$", []string{"", "🐲🐲"}, []string{"🐉"}},
		{"lone surrogate matches nothing valid", `^\uD83D$`, nil, []string{"\uFFFD", "🐲"}},
		{"high surrogate then a non-surrogate escape", `^\uD83D\u0041$`, nil, []string{"A", "\uFFFDA"}},
		{"low surrogate then high", `^\uDC32\uD83D$`, nil, []string{"🐲"}},
		{"escaped U+FFFD after a high surrogate", `^\uD83D?\uFFFD$`, []string{"\uFFFD"}, nil},
		{"identity escapes", `^\^\$\\\.\*\+\?\(\)\[\]\{\}\|\/$`, []string{`^$\.*+?()[]{}|/`}, nil},
		{"slash unescaped", "^a/b$", []string{"a/b"}, nil},
		{"property Letter", `^\p{Letter}+$`, []string{"école", "Ωμέγα"}, []string{"a1"}},
		{"property L", `^\p{L}$`, []string{"ß"}, []string{"1"}},
		{"property digit alias", `^\p{digit}+$`, []string{"42", "\u09ea\u09e8"}, []string{"-%#"}},
		{"negated property", `^\P{L}$`, []string{"1"}, []string{"a"}},
		{"general category key", `^\p{gc=Lu}$`, []string{"A"}, []string{"a"}},
		{"general category long key", `^\p{General_Category=Uppercase_Letter}$`, []string{"Ä"}, []string{"ä"}},
		{"script Unknown", `^\p{sc=Zzzz}$`, []string{"\u0378"}, []string{"a", "1"}}, // U+0378: unassigned
		{"script of no code point", `^\p{sc=Hrkt}$`, nil, []string{"\u3042", "\u30a2", "a"}},
		{"script", `^\p{Script=Greek}+$`, []string{"αβγ"}, []string{"abc"}},
		{"script alias", `^\p{sc=Cyrl}$`, []string{"ж"}, []string{"z"}},
		{"negated script", `^\P{sc=Latn}$`, []string{"ж", "1"}, []string{"z"}},
		{"binary property", `^\p{White_Space}$`, []string{" ", "\u0085"}, []string{"a"}},
		{"binary property alias", `^\p{Alpha}+$`, []string{"aÅ\u0345"}, []string{"1"}},
		{"ASCII property", `^\p{ASCII}+$`, []string{"abc~"}, []string{"é"}},
		{"Any property", `^\p{Any}$`, []string{"\n"}, []string{""}},
		{"Assigned", `^\p{Assigned}$`, []string{"a"}, []string{"\u0378"}},
		{"Unassigned", `^\p{Cn}$`, []string{"\u0378"}, []string{"a"}},
		{"ID_Start", `^\p{ID_Start}\p{ID_Continue}*$`, []string{"a1", "x"}, []string{"1a"}},
		{"class", "^[abc]+$", []string{"abcba"}, []string{"abd"}},
		{"class range", "^[a-z]cole$", []string{"ecole"}, []string{"écolé", "école"}},
		{"negated class", "^[^a-c]$", []string{"d", "\n"}, []string{"a"}},
		{"class with escapes", `^[\d\s]+$`, []string{"1 2\u00a0"}, []string{"a"}},
		{"class with negated escape", `^[\S]$`, []string{"a"}, []string{" ", "\u3000"}},
		{"class with negated space and letter", `^[\Sa ]$`, []string{"a", "b", " "}, []string{"\t"}},
		{"class with negated property", `^[\P{L}a]$`, []string{"a", "1"}, []string{"b"}},
		{"class dash at ends", `^[-a-]+$`, []string{"-a-"}, []string{"b"}},
		{"class escaped dash", `^[a\-z]+$`, []string{"-az"}, []string{"b"}},
		{"class after range dash", `^[a-c-e]+$`, []string{"abc-e"}, []string{"d"}},
		{"class escape then dash", `^[\w-]+$`, []string{"a-b"}, []string{"."}},
		{"class backspace", `^[\b]$`, []string{"\b"}, []string{"b"}},
		{"class special chars", `^[\]\[^\\]+$`, []string{`][^\`}, []string{"a"}},
		{"class caret not first", `^[a^]+$`, []string{"^a"}, []string{"b"}},
		{"class unicode range", `^[\u{1F600}-\u{1F64F}]$`, []string{"😀"}, []string{"a"}},
		{"class surrogate pair range", `^[\uD83D\uDE00-\uD83D\uDE4F]$`, []string{"😀"}, []string{"a"}},
		{"empty class", "^[]$", nil, []string{"", "a"}},
		{"negated empty class", "^[^]$", []string{"a", "\n"}, []string{""}},
		{"non-capturing group", "^(?:ab)+$", []string{"abab"}, []string{"aba"}},
		{"capturing group", "^(ab)+$", []string{"ab"}, []string{"a"}},
		{"named group", "^(?<year>\\d{4})-(?<month>\\d{2})$", []string{"2024-01"}, []string{"2024-1"}},
		{"named group non-ASCII name", "^(?<año>\\d)$", []string{"1"}, nil},
		{"duplicate names in alternatives", "^(?:(?<a>x)|(?<a>y))$", []string{"x", "y"}, []string{"z"}},
		{"star", "^a*$", []string{"", "aaa"}, []string{"b"}},
		{"plus", "^a+$", []string{"a"}, []string{""}},
		{"optional", "^ab?$", []string{"a", "ab"}, []string{"abb"}},
		{"exact count", "^a{3}$", []string{"aaa"}, []string{"aa", "aaaa"}},
		{"min count", "^a{2,}$", []string{"aa", "aaaaa"}, []string{"a"}},
		{"range count", "^a{1,2}$", []string{"a", "aa"}, []string{"aaa"}},
		{"zero count", "^a{0}b$", []string{"b"}, []string{"ab"}},
		{"lazy quantifiers", "^a*?b+?c??d{1,2}?$", []string{"abd", "bcdd"}, []string{"ad"}},
		{"quantified group", "^(?:ab){2}$", []string{"abab"}, []string{"ab"}},
		{"word boundary", `\bfoo\b`, []string{"a foo b"}, []string{"afoo"}},
		{"non word boundary", `\Bfoo`, []string{"afoo"}, []string{"foo"}},
		{"alternation", "^(?:cat|dog)$", []string{"cat", "dog"}, []string{"cow"}},
		{"empty alternative", "^(?:a|)$", []string{"a", ""}, []string{"b"}},
		{"empty pattern", "", []string{"", "x"}, nil},
		{"groups nested 999 deep", strings.Repeat("(", 999) + "a" + strings.Repeat(")", 999), []string{"a"}, []string{"b"}},
		{"ignore case modifier", "^(?i:ab)c$", []string{"ABc", "abc"}, []string{"abC"}},
		{"clear ignore case", "^(?i:a(?-i:b))$", []string{"Ab"}, []string{"AB"}},
		{"add with an empty removal", "^(?i-:a)$", []string{"A"}, []string{"b"}},
		{"ignore case complement property", "^(?i:\\P{Lu})$", []string{"a", "A", "1"}, nil},
		{"ignore case complement script", "^(?i:\\P{sc=Greek})$", []string{"a", "1", "\u03bc"}, []string{"\u03b1"}}, // µ (U+00B5, Common) folds to μ
		{"ignore case negated class of property", "^(?i:[^\\p{Lu}])$", []string{"1"}, []string{"a", "A"}},
		{"ignore case word", "^(?i:\\w)$", []string{"s", "S", "\u017f", "\u212a"}, []string{"é"}},
		{"ignore case non-word", "^(?i:\\W)$", []string{"é", "-"}, []string{"s", "\u017f", "k", "\u212a"}},
		{"ignore case class", "^(?i:[a-c])$", []string{"B"}, []string{"d"}},
		{"ignore case negated class", "^(?i:[^a-c])$", []string{"d"}, []string{"B", "b"}},
		{"dotAll modifier", "^(?s:.)$", []string{"\n", "\u2028"}, nil},
		{"dotAll off again", "^(?s:(?-s:.))$", []string{"a"}, []string{"\n"}},
		{"non-ASCII literal", "^\u00e1", []string{"\u00e1x"}, []string{"a\u0301"}},
		{"syntax chars in literal text", "a.b", []string{"axb"}, []string{"ab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re, err := Compile(tt.pattern)
			if err != nil {
				t.Fatalf("Compile(%q) error: %v", tt.pattern, err)
			}
			for _, s := range tt.match {
				if !re.MatchString(s) {
					t.Errorf("Compile(%q) = %s, does not match %q, want a match", tt.pattern, re, s)
				}
			}
			for _, s := range tt.nonMatch {
				if re.MatchString(s) {
					t.Errorf("Compile(%q) = %s, matches %q, want no match", tt.pattern, re, s)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		want    error // ErrSyntax or ErrUnsupported
	}{
		{"unclosed group", "^(abc]", ErrSyntax},
		{"unmatched close", "abc)", ErrSyntax},
		{"unclosed class", "[abc", ErrSyntax},
		{"identity escape of letter", `\a`, ErrSyntax},
		{"identity escape of dash outside class", `\-`, ErrSyntax},
		{"identity escape of quote", `\"`, ErrSyntax},
		{"trailing backslash", `abc\`, ErrSyntax},
		{"trailing backslash in class", `[a\`, ErrSyntax},
		{"nothing to repeat", "*a", ErrSyntax},
		{"count first", "{1}a", ErrSyntax},
		{"lone brace first", "{a", ErrSyntax},
		{"double quantifier", "a**", ErrSyntax},
		{"quantified anchor", "^*", ErrSyntax},
		{"quantified boundary", `\b+`, ErrSyntax},
		{"quantified look-ahead", "(?=a)*", ErrSyntax},
		{"lone brace", "a{", ErrSyntax},
		{"lone open quantifier", "a{1", ErrSyntax},
		{"brace without min", "a{,3}", ErrSyntax},
		{"lone closing brace", "a}", ErrSyntax},
		{"lone closing bracket", "a]", ErrSyntax},
		{"reversed count", "a{3,1}", ErrSyntax},
		{"reversed range", "[z-a]", ErrSyntax},
		{"range with class escape", `[\w-z]`, ErrSyntax},
		{"range to class escape", `[a-\d]`, ErrSyntax},
		{"python named group", "(?P<name>x)", ErrSyntax},
		{"python back-reference", "(?P<n>a)(?P=n)", ErrSyntax},
		{"comment group", "(?#comment)a", ErrSyntax},
		{"global flag", "(?i)abc", ErrSyntax},
		{"global flags", "(?ims)abc", ErrSyntax},
		{"repeated modifier", "(?ii:a)", ErrSyntax},
		{"empty modifier removal", "(?-:a)", ErrSyntax},
		{"unknown modifier", "(?x:a)", ErrSyntax},
		{"bad control escape", `\c1`, ErrSyntax},
		{"bad hex escape", `\x4`, ErrSyntax},
		{"bad unicode escape", `\u12`, ErrSyntax},
		{"unicode escape too big", `\u{110000}`, ErrSyntax},
		{"empty unicode braces", `\u{}`, ErrSyntax},
		{"octal escape", `\01`, ErrSyntax},
		{"back-reference to missing group", `(a)\2`, ErrSyntax},
		{"back-reference without groups", `\1`, ErrSyntax},
		{"back-reference to missing group after a valid one", `(a)\1\2`, ErrSyntax},
		{"named reference to missing group", `(?<a>x)\k<b>`, ErrSyntax},
		{"k without name", `\k`, ErrSyntax},
		{"bad group name", "(?<1a>x)", ErrSyntax},
		{"empty group name", "(?<>x)", ErrSyntax},
		{"duplicate group name", "(?<a>x)(?<a>y)", ErrSyntax},
		{"duplicate nested name", "(?<a>(?<a>y))", ErrSyntax},
		{"unknown property", `\p{Foo}`, ErrSyntax},
		{"lower-case property", `\p{letter}`, ErrSyntax},
		{"lone script name", `\p{Greek}`, ErrSyntax},
		{"property without braces", `\pL`, ErrSyntax},
		{"unclosed property", `\p{L`, ErrSyntax},
		{"unknown script", `\p{Script=Klingon}`, ErrSyntax},
		{"decimal escape in class", `[\1]`, ErrSyntax},
		{"boundary in class", `[\B]`, ErrSyntax},
		{"look-ahead", "a(?=b)", ErrUnsupported},
		{"negative look-ahead", "a(?!b)", ErrUnsupported},
		{"look-behind", "(?<=a)b", ErrUnsupported},
		{"negative look-behind", "(?<!a)b", ErrUnsupported},
		{"back-reference", `(a)\1`, ErrUnsupported},
		{"named back-reference", `(?<n>a)\k<n>`, ErrUnsupported},
		{"forward named reference", `\k<n>(?<n>a)`, ErrUnsupported},
		{"forward back-reference", `\1(a)`, ErrUnsupported},
		{"repeat above RE2 limit", "a{1001}", ErrUnsupported},
		{"groups nested 1000 deep", strings.Repeat("(", 1000) + "a" + strings.Repeat(")", 1000), ErrUnsupported},
		{"multiline anchors", "(?m:^a$)", ErrUnsupported},
		{"emoji property", `\p{Emoji}`, ErrUnsupported},
		{"script extensions", `\p{scx=Grek}`, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re, err := Compile(tt.pattern)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Compile(%q) = %v, %v; want an error wrapping %q", tt.pattern, re, err, tt.want)
			}
			if got, want := Valid(tt.pattern), tt.want == ErrUnsupported; got != want {
				t.Errorf("Valid(%q) = %v, want %v", tt.pattern, got, want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		pattern string
		want    bool
	}{
		{"([abc])+\\s+$", true},
		{"^(abc]", false},
		{"(?<name>x)", true},
		{"(?<$_a\u200c\u200d1>x)", true}, // $, _, ZWNJ and ZWJ in a group name
		{"(?<\u200ca>x)", false},         // ZWNJ cannot start it
		{"(?<1a>x)", false},
		{"(?<a+>x)", false},
		{`(?<\u0061\u{62}>x)\k<ab>`, true},
		{`(?<a\x62>x)`, false},
		{"(?<n>a)\\k<n>", true},
		{"(?<=a+)b", true},
		{"[]", true},
		{"[^]", true},
		{`\cA`, true},
		{`\a`, false},
		{"(?P<name>x)", false},
		{"(?i)abc", false},
		{"(?i:abc)", true},
		{"a{1001}", true},
		{`\p{Extended_Pictographic}`, true},
		{`\u{10FFFF}`, true},
		{`\uD800`, true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			if got := Valid(tt.pattern); got != tt.want {
				t.Errorf("Valid(%q) = %v, want %v", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestTranslate(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"^abc$", `\Aabc\z`},
		{`\d`, `[0-9]`},
		{`\D`, `[\x{0}-\x{2f}\x{3a}-\x{d7ff}\x{e000}-\x{10ffff}]`},
		{`[\x41-\uD900]`, `[A-\x{d7ff}]`},
		{`[\uDC00-\uDFFF]`, `[^\x00-\x{10ffff}]`},
		{`[^\uDC00]`, `[\x00-\x{10ffff}]`},
		{`\p{L}`, `[\p{L}]`},
		{`\P{sc=Greek}`, `[\P{Greek}]`},
		{"(?<name>x)", `(x)`},
		{"a.b", `a[^\n\r\x{2028}\x{2029}]b`},
		{"a+?", `a+?`},
		{"(?:ab)*", `(?:ab)*`},
		{"ab{2,3}", `ab{2,3}`},
		{"(?i:a)", `(?i:a)`},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, err := Translate(tt.pattern)
			if err != nil {
				t.Fatalf("Translate(%q) error: %v", tt.pattern, err)
			}
			if got != tt.want {
				t.Errorf("Translate(%q) = %q, want %q", tt.pattern, got, tt.want)
			}
		})
	}
}

// TestScriptAliases checks the alias table against Go's script tables, so a
// Unicode upgrade that adds scripts is noticed.
func TestScriptAliases(t *testing.T) {
	aliased := map[string]bool{}
	for alias, long := range scriptAliases {
		aliased[long] = true
		if _, ok := unicode.Scripts[long]; !ok && long != "Unknown" && long != "Katakana_Or_Hiragana" {
			t.Errorf("scriptAliases[%q] = %q, which Go's unicode.Scripts lacks", alias, long)
		}
	}
	for long := range unicode.Scripts {
		if !aliased[long] {
			t.Errorf("script %q has no ISO 15924 alias in scriptAliases", long)
		}
	}
}

// TestBinaryProperties checks that every binary property ECMA-262 names is
// either served or reported as unsupported, never as a syntax error.
func TestBinaryProperties(t *testing.T) {
	for short, long := range binaryAliases {
		for _, name := range []string{short, long} {
			_, err := Compile(`\p{` + name + `}`)
			if err != nil && !errors.Is(err, ErrUnsupported) {
				t.Errorf("Compile(\\p{%s}) error: %v", name, err)
			}
			if unsupportedBinary[long] != (err != nil) {
				t.Errorf("Compile(\\p{%s}) error = %v, want unsupported = %v", name, err, unsupportedBinary[long])
			}
		}
	}
}

func TestCompiledIsRE2(t *testing.T) {
	// The translation of every supported construct must compile with the
	// standard library on its own.
	for _, p := range []string{`[\s\S]`, `\p{Any}`, `[^\P{L}]`, `(?s:.)`, `[]`, `[^]`, `\u{10FFFF}`} {
		src, err := Translate(p)
		if err != nil {
			t.Fatalf("Translate(%q) error: %v", p, err)
		}
		if _, err := regexp.Compile(src); err != nil {
			t.Errorf("regexp.Compile(Translate(%q) = %q) error: %v", p, src, err)
		}
	}
}
