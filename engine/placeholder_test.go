package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// placeholderKindUnfiltered is placeholderKind without its first-byte
// filter (which strings are lower-cased and matched at all): the reference
// it must never disagree with.
func placeholderKindUnfiltered(s string) string {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "":
		return "empty or blank string"
	case len(t) > 200:
		if strings.HasPrefix(t, "lorem ipsum") {
			return "lorem ipsum filler"
		}
		return ""
	case placeholderWords[t], placeholderPattern.MatchString(t):
		return "placeholder text"
	}
	return ""
}

// TestPlaceholderFilter holds placeholderKind to the unfiltered reference
// on every vocabulary word in three casings, with padding, and on the big
// list of naughty strings.
func TestPlaceholderFilter(t *testing.T) {
	var inputs []string
	for w := range placeholderWords {
		inputs = append(inputs, w, strings.ToUpper(w), " \u00a0"+strings.ToUpper(w[:1])+w[1:]+"\t")
	}
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "naughty-strings", "blns.json"))
	if err != nil {
		t.Fatalf("reading the naughty strings: %v", err)
	}
	var naughty []string
	if err := json.Unmarshal(raw, &naughty); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, naughty...)
	inputs = append(inputs, "\u212a", "İnsert here", "…", "XXX", "Lorem Ipsum", "{{ x }}", "< insert x >", "[ insert y ]", "......", "……", "xXx", "lorem ipsum"+strings.Repeat(" dolor", 40))
	for _, s := range inputs {
		if got, want := placeholderKind(s), placeholderKindUnfiltered(s); got != want {
			t.Errorf("placeholderKind(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzPlaceholderFilter: the first-byte filter never changes an answer.
func FuzzPlaceholderFilter(f *testing.F) {
	for _, s := range []string{"TODO", " tbd ", "xxx", "…", "Lorem ipsum", "<insert a>", "[Insert b]", "{{c}}", "Acme", "\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := placeholderKind(s), placeholderKindUnfiltered(s); got != want {
			t.Errorf("placeholderKind(%q) = %q, want %q", s, got, want)
		}
	})
}
