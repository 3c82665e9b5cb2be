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
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "":
		return "empty or blank string"
	case len(t) > 200: // placeholders are short; skip regex work on long text
		if strings.HasPrefix(t, "lorem ipsum") {
			return "lorem ipsum filler"
		}
		return ""
	case placeholderWords[t], placeholderPattern.MatchString(t):
		return "placeholder text"
	}
	return ""
}
