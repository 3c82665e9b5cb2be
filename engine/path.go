package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/engine/schema"
)

// Path is a parsed path into submitted_output (SPEC §2): dotted keys,
// `[]` to fan out over an array, `[2]` for one index and `["a.b"]` for a key
// that holds a dot or a bracket. A leading `$.` is accepted and ignored.
type Path struct {
	steps []step
}

type stepKind uint8

const (
	stepKey stepKind = iota
	stepIndex
	stepAll
)

type step struct {
	kind  stepKind
	key   string
	index int
}

// maxPathLen bounds the text of one path; real paths are far shorter.
const maxPathLen = 1024

// PathError says why a path does not parse, without quoting it.
type PathError struct{ Problem string }

func (e *PathError) Error() string { return "path " + e.Problem }

// ParsePath parses a path as written in a rule or bound.
func ParsePath(s string) (Path, error) {
	if len(s) > maxPathLen {
		return Path{}, &PathError{fmt.Sprintf("is longer than %d bytes", maxPathLen)}
	}
	if !utf8.ValidString(s) {
		return Path{}, &PathError{"is not valid UTF-8"}
	}
	switch {
	case s == "$":
		return Path{}, nil
	case strings.HasPrefix(s, "$."):
		s = s[2:]
	case strings.HasPrefix(s, "$["):
		s = s[1:]
	}
	if s == "" {
		return Path{}, &PathError{"is empty"}
	}
	var p Path
	for i := 0; i < len(s); {
		if s[i] != '[' {
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != ']' {
				j++
			}
			if j == i {
				return Path{}, &PathError{fmt.Sprintf("has an empty key at byte %d", i)}
			}
			if j < len(s) && s[j] == ']' {
				return Path{}, &PathError{fmt.Sprintf("has an unmatched ']' at byte %d", j)}
			}
			p.steps = append(p.steps, step{kind: stepKey, key: s[i:j]})
			i = j
		}
		for i < len(s) && s[i] == '[' {
			st, n, err := parseBracket(s[i:])
			if err != nil {
				return Path{}, &PathError{fmt.Sprintf("%s at byte %d", err.Problem, i)}
			}
			p.steps = append(p.steps, st)
			i += n
		}
		if i < len(s) {
			if s[i] != '.' {
				return Path{}, &PathError{fmt.Sprintf("needs '.' or '[' at byte %d", i)}
			}
			i++
			if i == len(s) {
				return Path{}, &PathError{"ends with '.'"}
			}
		}
	}
	return p, nil
}

// parseBracket parses one `[]`, `[N]` or `["key"]` at the start of s and
// returns the step and the bytes it used.
func parseBracket(s string) (step, int, *PathError) {
	if strings.HasPrefix(s, "[]") {
		return step{kind: stepAll}, 2, nil
	}
	if len(s) > 1 && s[1] == '"' {
		// A JSON string literal: find its closing quote, honouring escapes.
		j := 2
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j+1 >= len(s) || s[j+1] != ']' {
			return step{}, 0, &PathError{"has an unterminated [\"key\"]"}
		}
		var key string
		if err := json.Unmarshal([]byte(s[1:j+1]), &key); err != nil {
			return step{}, 0, &PathError{"has an invalid quoted key"}
		}
		return step{kind: stepKey, key: key}, j + 2, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return step{}, 0, &PathError{"has an unterminated '['"}
	}
	n, err := strconv.Atoi(s[1:end])
	switch {
	case err != nil:
		return step{}, 0, &PathError{"has a bracket that is not [], [index] or [\"key\"]"}
	case s[1] < '0' || s[1] > '9' || s[1] == '0' && end > 2: // as RFC 6901 writes an index
		return step{}, 0, &PathError{"has an index with a sign or a leading zero"}
	}
	return step{kind: stepIndex, index: n}, end + 1, nil
}

// String renders the path in its reported form, starting with `$`.
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, st := range p.steps {
		st.write(&b)
	}
	return b.String()
}

// write appends the step in the reported form: `[]`, `[2]`, `.key`, or
// `["key"]` when the key would not read back.
func (st step) write(b *strings.Builder) {
	switch {
	case st.kind == stepAll:
		b.WriteString("[]")
	case st.kind == stepIndex:
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(st.index))
		b.WriteByte(']')
	case st.key != "" && !strings.ContainsAny(st.key, `.[]"\`) && !strings.HasPrefix(st.key, "$"):
		b.WriteByte('.')
		b.WriteString(st.key)
	default:
		q, _ := json.Marshal(st.key) // a string always marshals
		b.WriteByte('[')
		b.Write(q)
		b.WriteByte(']')
	}
}

// Match is one value a path resolved to. Its concrete location is built only
// when asked for (Loc): checks that hold never need it.
type Match struct {
	Value any
	steps []step // the path that reached Value
	fan   []int  // the index taken at each `[]` of steps, in order
}

// Loc returns the match's concrete location.
func (m Match) Loc() Location {
	loc := make(Location, 0, len(m.steps))
	fan := m.fan
	for _, st := range m.steps {
		switch st.kind {
		case stepKey:
			loc = append(loc, st.key)
		case stepIndex:
			loc = append(loc, st.index)
		case stepAll:
			loc = append(loc, fan[0])
			fan = fan[1:]
		}
	}
	return loc
}

// Location is a concrete place in a document: keys (string) and indexes (int).
type Location []any

// String renders the location in the `$.a[0].b` form.
func (l Location) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, seg := range l {
		if i, ok := seg.(int); ok {
			step{kind: stepIndex, index: i}.write(&b)
		} else {
			step{kind: stepKey, key: seg.(string)}.write(&b)
		}
	}
	return b.String()
}

// appendMatches appends to dst every value the path reaches in root, in
// document order; a key on a non-object, an index out of range or `[]` on a
// non-array reaches nothing. The values a `[]` fans out to cost b a step
// per valuesPerStep; once b stops, the matches are incomplete and b.Err()
// says why.
func (p Path) appendMatches(dst []Match, root any, b *schema.Budget) []Match {
	var fan [8]int // the indexes taken at the `[]` steps, while they fit
	var arena []int
	return resolveFrom(dst, p.steps, 0, root, fan[:0], &arena, b)
}

// resolveFrom appends the matches that steps[i:] reach from v, in document
// order, depth first. fan holds the indexes taken at the `[]` steps before
// i. The fan indexes of every match are slices of one arena, sized at the
// first `[]` for the matches it makes.
func resolveFrom(dst []Match, steps []step, i int, v any, fan []int, arena *[]int, b *schema.Budget) []Match {
	for ; i < len(steps); i++ {
		switch st := &steps[i]; st.kind {
		case stepKey:
			obj, ok := v.(map[string]any)
			if !ok {
				return dst
			}
			if v, ok = obj[st.key]; !ok {
				return dst
			}
		case stepIndex:
			arr, ok := v.([]any)
			if !ok || st.index >= len(arr) {
				return dst
			}
			v = arr[st.index]
		case stepAll:
			arr, ok := v.([]any)
			if !ok || !b.Charge(len(arr)/valuesPerStep) {
				return dst
			}
			if *arena == nil {
				*arena = make([]int, 0, len(arr)*(len(fan)+1))
			}
			dst = slices.Grow(dst, len(arr))
			for j, e := range arr {
				if dst = resolveFrom(dst, steps, i+1, e, append(fan, j), arena, b); b.Stopped() {
					return dst
				}
			}
			return dst
		}
	}
	m := Match{Value: v, steps: steps}
	if len(fan) > 0 {
		start := len(*arena)
		*arena = append(*arena, fan...)
		m.fan = (*arena)[start:len(*arena):len(*arena)]
	}
	return append(dst, m)
}

// PointerLocation turns an RFC 6901 pointer into a Location, reading the
// instance to tell array indexes from object keys that look like numbers.
func PointerLocation(root any, pointer string) Location {
	if pointer == "" {
		return nil
	}
	parts := strings.Split(pointer[1:], "/")
	loc := make(Location, 0, len(parts))
	cur := root
	for _, part := range parts {
		key := strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		if arr, ok := cur.([]any); ok {
			if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(arr) {
				loc, cur = append(loc, i), arr[i]
				continue
			}
		}
		obj, _ := cur.(map[string]any) // nil, which holds nothing, for any other value
		loc, cur = append(loc, key), obj[key]
	}
	return loc
}
