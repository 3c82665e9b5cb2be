package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// maxQuote is the most characters of the output a found value quotes.
const maxQuote = 80

// brief describes a value of the output in at most maxQuote characters:
// `number 129.5`, `string "abc"`, `object with 3 keys`.
func brief(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case json.Number:
		return "number " + truncate(string(x), maxQuote-7)
	case string:
		return "string " + strconv.Quote(truncate(x, maxQuote-9))
	case []any:
		return fmt.Sprintf("array of %d items", len(x))
	case map[string]any:
		return fmt.Sprintf("object with %d keys", len(x))
	}
	return fmt.Sprintf("%T", v)
}

// truncate cuts s to at most n characters, marking the cut with "…". It
// reads no further than the character after the n-th: a long value of the
// output is not copied to be cut.
func truncate(s string, n int) string {
	cut, count := 0, 0
	for i := range s {
		switch count {
		case n - 1:
			cut = i
		case n:
			return s[:cut] + "…"
		}
		count++
	}
	return s
}
