package schema

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// defaultBase is the base URI of a document without $id. Relative references
// resolve against it and, naming nothing loaded, are reported as remote.
const defaultBase = "https://schema.invalid/root.json"

// resolveURI resolves ref against base (an absolute URI without fragment)
// and returns the absolute URI without fragment and the decoded fragment.
func resolveURI(base, ref string) (string, string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", "", err
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", "", err
	}
	u := b.ResolveReference(r)
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	return u.String(), frag, nil
}

// normalizeURI returns uri without its fragment, in the form resolveURI
// produces.
func normalizeURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if !u.IsAbs() {
		return "", errors.New("not an absolute URI")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// escapeToken escapes one RFC 6901 reference token (strings.ReplaceAll
// returns s itself when nothing matches).
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// walkPointer returns the value at RFC 6901 pointer ptr inside v. ptr is
// not the root's: its callers append to a schema's pointer a '/' and a
// token, or a fragment that starts with '/'.
func walkPointer(v any, ptr string) (any, bool) {
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = unescapeToken(tok)
		switch x := v.(type) {
		case map[string]any:
			c, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = c
		case []any:
			// RFC 6901: digits only, no sign, no leading zero.
			i, err := strconv.Atoi(tok)
			if err != nil || tok[0] < '0' || tok[0] > '9' || i >= len(x) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
