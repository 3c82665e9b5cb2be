package engine

import (
	"regexp"
	"strings"
)

// The placeholder vocabulary of the content:placeholder check (SPEC §3.3),
// kept in this one place. A string value fails the check when, after
// trimming white space and ignoring case, it is:
//   - empty or blank;
//   - one of placeholderWords (todo, tbd, tba, n/a, fixme, placeholder, …);
//   - only x's (three or more, e.g. "xxx", "XXXX"), or only dots or an
//     ellipsis ("...", "…");
//   - lorem ipsum text (starts with "lorem ipsum");
//   - a template slot: "<insert …>", "{{…}}", "[placeholder]", "[insert …]",
//     "<placeholder>", "[todo]".
var placeholderWords = map[string]bool{
	"todo": true, "tbd": true, "tba": true, "n/a": true, "fixme": true,
	"placeholder": true, "[placeholder]": true, "<placeholder>": true,
	"[todo]": true, "[tbd]": true, "insert here": true, "your text here": true,
}

// placeholderPattern matches the vocabulary's patterns.
var placeholderPattern = regexp.MustCompile(`^(?:x{3,}$|(?:\.{3,}|…+)$|lorem ipsum|<\s*insert\b.*>$|\[\s*insert\b.*\]$|\{\{.*\}\}$)`)

// placeholderKind reports why s is a placeholder, or "" when it is real
// content.
func placeholderKind(s string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "empty or blank string"
	}
	if !mayBePlaceholder(t[0]) {
		return ""
	}
	return lowerPlaceholderKind(strings.ToLower(t))
}

// lowerPlaceholderKind is placeholderKind of t, a string already trimmed,
// lower-cased and not empty.
func lowerPlaceholderKind(t string) string {
	if len(t) > 200 { // placeholders are short; skip regex work on long text
		if strings.HasPrefix(t, "lorem ipsum") {
			return "lorem ipsum filler"
		}
		return ""
	}
	if placeholderWords[t] || placeholderPattern.MatchString(t) {
		return "placeholder text"
	}
	return ""
}

// mayBePlaceholder reports whether a trimmed string starting with byte c
// can be a placeholder: every word and pattern above starts, in either
// case, with one of these bytes. A string starting otherwise is real
// content without lower-casing or matching it. Non-ASCII lead bytes (the
// ellipsis, letters whose lower case is another letter) are always
// checked.
func mayBePlaceholder(c byte) bool {
	if c >= 0x80 {
		return true
	}
	switch c {
	case 't', 'T', 'n', 'N', 'f', 'F', 'p', 'P', 'i', 'I', 'y', 'Y', 'x', 'X', 'l', 'L', '[', '<', '.', '{':
		return true
	}
	return false
}
