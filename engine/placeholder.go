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

var placeholderPatterns = []*regexp.Regexp{
	regexp.MustCompile(`^x{3,}$`),
	regexp.MustCompile(`^(\.{3,}|…+)$`),
	regexp.MustCompile(`^lorem ipsum`),
	regexp.MustCompile(`^<\s*insert\b.*>$`),
	regexp.MustCompile(`^\[\s*insert\b.*\]$`),
	regexp.MustCompile(`^\{\{.*\}\}$`),
}

// placeholderKind reports why s is a placeholder, or "" when it is real
// content.
func placeholderKind(s string) string {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return "empty or blank string"
	}
	if len(t) > 200 { // placeholders are short; skip regex work on long text
		if strings.HasPrefix(t, "lorem ipsum") {
			return "lorem ipsum filler"
		}
		return ""
	}
	if placeholderWords[t] {
		return "placeholder text"
	}
	for _, re := range placeholderPatterns {
		if re.MatchString(t) {
			return "placeholder text"
		}
	}
	return ""
}
