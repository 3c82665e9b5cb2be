package format

import (
	"regexp"
	"strings"

	"github.com/google/uuid"
)

// pointerEscapes are the two escapes RFC 6901 allows after a ~.
var pointerEscapes = strings.NewReplacer("~0", "", "~1", "")

// validJSONPointer checks RFC 6901: empty, or "/"-prefixed reference tokens
// in which ~ is only used as ~0 or ~1.
func validJSONPointer(s string) bool {
	return (s == "" || s[0] == '/') && !strings.Contains(pointerEscapes.Replace(s), "~")
}

// relativePointerPrefix is a Relative JSON Pointer's non-negative integer
// without leading zeros and its optional index manipulation (+N or -N,
// added by the 2020-12 revision of the draft).
var relativePointerPrefix = regexp.MustCompile(`^(?:0|[1-9][0-9]*)(?:[+-](?:0|[1-9][0-9]*))?`)

// validRelativeJSONPointer checks a Relative JSON Pointer: the prefix, then
// "#" or a JSON pointer.
func validRelativeJSONPointer(s string) bool {
	n := len(relativePointerPrefix.FindString(s))
	return n > 0 && (s[n:] == "#" || validJSONPointer(s[n:]))
}

// validUUID checks the RFC 4122 string form: 8-4-4-4-12 hex digits of any
// case, any version and variant. uuid.Validate also takes the URN, braced
// and dashless forms, which the length rules out.
func validUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }
