package payment

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Authorizer sets the authentication headers of one request to the
// facilitator, just before it is sent: the request's method and URL are
// final. Its errors must not carry a secret.
type Authorizer interface {
	Authorize(req *http.Request) error
}

// Authorizers applies each of its authorizers in turn.
type Authorizers []Authorizer

// Authorize runs every authorizer on req; the first error stops.
func (as Authorizers) Authorize(req *http.Request) error {
	for _, a := range as {
		if err := a.Authorize(req); err != nil {
			return err
		}
	}
	return nil
}

// ErrFacilitatorHeader is wrapped by every error about a
// --facilitator-header. The messages name the header and the variables,
// never a value.
var ErrFacilitatorHeader = errors.New("invalid --facilitator-header")

// reservedHeaders are set by the facilitator client itself or by the HTTP
// transport: a --facilitator-header may not replace them.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Accept": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// StaticHeaders sets the same headers on every facilitator request: the
// way to reach a facilitator that wants an API key in a header. Printing
// it shows the header names only.
type StaticHeaders struct{ h http.Header }

// ParseStaticHeaders reads --facilitator-header lines "Name: value". In a
// value, $NAME and ${NAME} are replaced by the environment variable NAME
// (read with getenv; unset or empty is an error) and $$ by a $. The name
// must be an HTTP token and not one the client sets itself (Host,
// Content-Type, …); the value must have no CR, LF or other control
// character. A name given twice sends both values.
func ParseStaticHeaders(lines []string, getenv func(string) string) (*StaticHeaders, error) {
	h := http.Header{}
	for _, line := range lines {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: want \"Name: value\", with a colon after the header name", ErrFacilitatorHeader)
		}
		if !httpguts.ValidHeaderFieldName(name) {
			// Not quoted: a value typed without its name would be echoed.
			return nil, fmt.Errorf("%w: the text before the colon is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", ErrFacilitatorHeader)
		}
		canon := http.CanonicalHeaderKey(name)
		if reservedHeaders[canon] {
			return nil, fmt.Errorf("%w: %s is set by the verifier itself and cannot be replaced", ErrFacilitatorHeader, canon)
		}
		value, err := expandEnv(strings.TrimSpace(value), getenv)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFacilitatorHeader, canon, err)
		}
		if value == "" {
			return nil, fmt.Errorf("%w: %s has an empty value", ErrFacilitatorHeader, canon)
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, fmt.Errorf("%w: %s: the value (after expanding variables) has a CR, LF or other control character", ErrFacilitatorHeader, canon)
		}
		h.Add(canon, value)
	}
	return &StaticHeaders{h: h}, nil
}

// expandEnv replaces $NAME, ${NAME} and $$ in s; any other $ is an error,
// and so is a variable that is unset or empty.
func expandEnv(s string, getenv func(string) string) (string, error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		var name string
		switch {
		case strings.HasPrefix(s, "$"):
			b.WriteByte('$')
			s = s[1:]
			continue
		case strings.HasPrefix(s, "{"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return "", errors.New("a ${ has no closing }")
			}
			name, s = s[1:end], s[end+1:]
			if envNameLen(name) != len(name) || name == "" {
				return "", fmt.Errorf("${%s} is not a variable name", name)
			}
		default:
			n := envNameLen(s)
			if n == 0 {
				return "", errors.New("a $ must start $NAME or ${NAME} (write $$ for a $)")
			}
			name, s = s[:n], s[n:]
		}
		v := getenv(name)
		if v == "" {
			return "", fmt.Errorf("the environment variable %s is unset or empty", name)
		}
		b.WriteString(v)
	}
}

// envNameLen is the length of the variable name at the start of s: a
// letter or _ followed by letters, digits and _.
func envNameLen(s string) int {
	for i, c := range []byte(s) {
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return i
		}
	}
	return len(s)
}

// Authorize sets the headers on req.
func (s *StaticHeaders) Authorize(req *http.Request) error {
	for name, values := range s.h {
		req.Header[name] = append([]string(nil), values...)
	}
	return nil
}

// Has reports whether the header name (any case) is set.
func (s *StaticHeaders) Has(name string) bool { return s != nil && len(s.h.Values(name)) > 0 }

// Names are the header names, sorted.
func (s *StaticHeaders) Names() []string {
	names := make([]string, 0, len(s.h))
	for n := range s.h {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// String lists the header names without their values.
func (s *StaticHeaders) String() string {
	return "headers " + strings.Join(s.Names(), ", ")
}

// Format prints s as String does, whatever the verb, so that no
// formatting of a value holding it prints a header value.
func (s *StaticHeaders) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue is s's description for log/slog.
func (s *StaticHeaders) LogValue() slog.Value { return slog.StringValue(s.String()) }
