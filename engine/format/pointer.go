package format

import "github.com/google/uuid"

// validJSONPointer checks RFC 6901: empty, or "/"-prefixed reference tokens
// in which ~ is only used as ~0 or ~1.
func validJSONPointer(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || s[i+1] != '0' && s[i+1] != '1') {
			return false
		}
	}
	return true
}

// validRelativeJSONPointer checks a Relative JSON Pointer: a non-negative
// integer without leading zeros, an optional index manipulation (+N or -N,
// added by the 2020-12 revision of the draft), then "#" or a JSON pointer.
func validRelativeJSONPointer(s string) bool {
	n := countDigits(s)
	if n == 0 || n > 1 && s[0] == '0' {
		return false
	}
	rest := s[n:]
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		m := countDigits(rest[1:])
		if m == 0 || m > 1 && rest[1] == '0' {
			return false
		}
		rest = rest[1+m:]
	}
	return rest == "#" || validJSONPointer(rest)
}

// validUUID checks the RFC 4122 string form: 8-4-4-4-12 hex digits of any
// case, any version and variant. uuid.Validate also takes the URN, braced
// and dashless forms, which the length rules out.
func validUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }
