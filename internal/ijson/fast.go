package ijson

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// The fast decoder below reads a well-formed I-JSON document in one pass
// over its bytes, without jsontext's token machinery, and decodes exactly
// what the jsontext path decodes. It only ever accepts: at the first thing
// it does not like (a syntax error, a duplicate name, invalid UTF-8, a lone
// surrogate, a number outside I-JSON, nesting at the limit) it gives up, and
// the caller runs the jsontext path, which finds and words the problem.
// FuzzFastMatchesJSONText holds the two to the same values.

// jsontextMaxDepth is jsontext's own nesting limit; the fast decoder gives
// up just short of it, whatever Options.MaxDepth says.
const jsontextMaxDepth = 10000

// Member is one member of a JSON object, as sent and decoded.
type Member struct {
	Name  string
	Raw   []byte // the value exactly as sent (no surrounding whitespace), a slice of the input
	Value any    // Raw decoded as Decode(Raw, opts) decodes it
}

// DecodeMembers decodes data, one JSON object, member by member, each value
// as Decode would decode it on its own with opts (so depth counts from the
// member's value), and appends the members to dst. It is the fast path of a
// caller that reports problems per member itself: ok is false whenever
// anything is wrong anywhere (syntax, a duplicate name at any level, invalid
// UTF-8, a lone surrogate, a number outside I-JSON, nesting past the
// limit), and the caller then takes its careful path to find out what.
//
// text is data as a string, or "". When given, every decoded string and
// number without escapes is a substring of text rather than a copy of its
// own, which spares an allocation each but keeps all of text in memory as
// long as any of them.
//
// A member named in checkOnly is checked exactly as the others but not
// decoded: its Value is nil, and Decode(Raw, opts) would succeed. It is for
// a value the caller may never need as Go values.
func DecodeMembers(dst []Member, data []byte, text string, opts *Options, checkOnly ...string) (members []Member, ok bool) {
	if text != "" && len(text) != len(data) {
		text = "" // not data's text: copy every string
	}
	d := fastDecoder{in: data, text: text, maxDepth: min(maxDepthOf(opts), jsontextMaxDepth-1)}
	d.skipSpace()
	if d.pos >= len(d.in) || d.in[d.pos] != '{' {
		return nil, false
	}
	d.pos++
	d.skipSpace()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		if dst == nil {
			dst = []Member{}
		}
		return dst, d.atEnd()
	}
	members = dst
	maxMembers := 0
	if opts != nil {
		maxMembers = opts.MaxMembers
	}
	var seen map[string]bool // once members outgrow a linear scan
	for {
		if maxMembers > 0 && len(members)-len(dst) == maxMembers {
			return nil, false
		}
		d.skipSpace()
		name, ok := d.name()
		if !ok {
			return nil, false
		}
		switch {
		case seen != nil:
			if seen[name] {
				return nil, false
			}
			seen[name] = true
		case len(members)-len(dst) < linearNames:
			if hasMember(members[len(dst):], name) {
				return nil, false
			}
		default:
			seen = make(map[string]bool, 2*linearNames)
			for i := range members[len(dst):] {
				seen[members[len(dst)+i].Name] = true
			}
			if seen[name] {
				return nil, false
			}
			seen[name] = true
		}
		d.skipSpace()
		start := d.pos
		var v any
		if slices.Contains(checkOnly, name) {
			if d.names == nil {
				d.names = make([]string, 0, 2*linearNames)
			}
			ok = d.checkValue(0)
		} else {
			v, ok = d.value(0)
		}
		if !ok {
			return nil, false
		}
		members = append(members, Member{Name: name, Raw: data[start:d.pos:d.pos], Value: v})
		more, ok := d.separator('}')
		if !ok {
			return nil, false
		}
		if !more {
			return members, d.atEnd()
		}
	}
}

// separator steps over the white space and the comma or closing byte after
// a member or an element: more is true after a comma, false after closing,
// and ok is false for anything else.
func (d *fastDecoder) separator(closing byte) (more, ok bool) {
	d.skipSpace()
	if d.pos >= len(d.in) {
		return false, false
	}
	c := d.in[d.pos]
	d.pos++
	switch c {
	case ',':
		return true, true
	case closing:
		return false, true
	}
	return false, false
}

// hasMember reports whether members has one named name.
func hasMember(members []Member, name string) bool {
	for i := range members {
		if members[i].Name == name {
			return true
		}
	}
	return false
}

// decodeFast is Decode's fast path; ok is false when Decode must take the
// jsontext path.
func decodeFast(data []byte, maxDepth int) (any, bool) {
	d := fastDecoder{in: data, maxDepth: min(maxDepth, jsontextMaxDepth-1)}
	d.skipSpace()
	v, ok := d.value(0)
	if !ok || !d.atEnd() {
		return nil, false
	}
	return v, true
}

func maxDepthOf(opts *Options) int {
	if opts != nil && opts.MaxDepth > 0 {
		return opts.MaxDepth
	}
	return DefaultMaxDepth
}

type fastDecoder struct {
	in       []byte
	text     string // in as a string, or "": see DecodeMembers
	pos      int
	maxDepth int
	buf      []byte   // scratch for strings with escapes
	names    []string // member names of the objects checkValue is inside
}

// atEnd reports whether only whitespace is left.
func (d *fastDecoder) atEnd() bool {
	d.skipSpace()
	return d.pos == len(d.in)
}

func (d *fastDecoder) skipSpace() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes the value at pos (whitespace skipped) at the given depth,
// with Decode's depth rule: a container is refused at depth >= maxDepth.
func (d *fastDecoder) value(depth int) (any, bool) {
	if d.pos >= len(d.in) {
		return nil, false
	}
	switch c := d.in[d.pos]; {
	case c == '{':
		if depth >= d.maxDepth {
			return nil, false
		}
		return d.object(depth)
	case c == '[':
		if depth >= d.maxDepth {
			return nil, false
		}
		return d.array(depth)
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *fastDecoder) literal(word string) bool {
	if len(d.in)-d.pos < len(word) || string(d.in[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

func (d *fastDecoder) object(depth int) (any, bool) {
	d.pos++
	obj := make(map[string]any)
	d.skipSpace()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		return obj, true
	}
	for {
		d.skipSpace()
		name, ok := d.name()
		if !ok {
			return nil, false
		}
		if _, dup := obj[name]; dup {
			return nil, false
		}
		d.skipSpace()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		obj[name] = v
		more, ok := d.separator('}')
		if !ok {
			return nil, false
		}
		if !more {
			return obj, true
		}
	}
}

// name reads a member name and the colon after it.
func (d *fastDecoder) name() (string, bool) {
	if d.pos >= len(d.in) || d.in[d.pos] != '"' {
		return "", false
	}
	name, ok := d.str()
	if !ok {
		return "", false
	}
	d.skipSpace()
	if d.pos >= len(d.in) || d.in[d.pos] != ':' {
		return "", false
	}
	d.pos++
	return name, true
}

func (d *fastDecoder) array(depth int) (any, bool) {
	d.pos++
	d.skipSpace()
	if d.pos < len(d.in) && d.in[d.pos] == ']' {
		d.pos++
		return []any{}, true
	}
	// A short array is gathered on the stack and allocated once, at its
	// length; a longer one moves to the heap and grows there.
	var room [8]any
	n := 0
	var arr []any
	for {
		d.skipSpace()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		switch {
		case arr != nil:
			arr = append(arr, v)
		case n < len(room):
			room[n] = v
			n++
		default:
			arr = append(make([]any, 0, 2*len(room)), room[:]...)
			arr = append(arr, v)
		}
		more, ok := d.separator(']')
		if !ok {
			return nil, false
		}
		if !more {
			if arr == nil {
				arr = append([]any(nil), room[:n]...)
			}
			return arr, true
		}
	}
}

// str decodes the string at pos (its opening quote). Escapes are decoded as
// jsontext decodes them; a lone or misordered surrogate gives up, as
// jsontext refuses it.
func (d *fastDecoder) str() (string, bool) {
	raw, plain, ok := d.plainStr()
	switch {
	case !ok:
		return "", false
	case plain:
		return d.string(raw, d.pos-1), true
	}
	b, ok := d.escapedStr(len(d.in) - len(raw))
	return string(b), ok
}

// string returns b, the input's bytes up to end, as a string: a substring
// of d.text when there is one, a copy otherwise.
func (d *fastDecoder) string(b []byte, end int) string {
	if d.text != "" {
		return d.text[end-len(b) : end]
	}
	return string(b)
}

// plainStr scans the string at pos (its opening quote). When it has no
// escapes, plain is true, raw is its content and pos is past it; at the
// first backslash it stops with plain false, raw the rest of the input from
// the string's first byte and pos at the backslash.
func (d *fastDecoder) plainStr() (raw []byte, plain, ok bool) {
	d.pos++
	start := d.pos
	for d.pos < len(d.in) {
		d.pos = plainRun(d.in, d.pos)
		if d.pos >= len(d.in) {
			break
		}
		c := d.in[d.pos]
		switch {
		case c == '"':
			d.pos++
			return d.in[start : d.pos-1], true, true
		case c == '\\':
			return d.in[start:], false, true
		case c < 0x20:
			return nil, false, false
		case c < 0x80:
			d.pos++
		default:
			if !d.utf8Char() {
				return nil, false, false
			}
		}
	}
	return nil, false, false
}

// escapedStr finishes a string that has an escape at pos, building it in
// d.buf from start; the bytes are d.buf's, valid until its next use.
func (d *fastDecoder) escapedStr(start int) ([]byte, bool) {
	d.buf = append(d.buf[:0], d.in[start:d.pos]...)
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			d.pos++
			return d.buf, true
		case c == '\\':
			r, ok := d.escape()
			if !ok {
				return nil, false
			}
			d.buf = utf8.AppendRune(d.buf, r)
		case c < 0x20:
			return nil, false
		case c < 0x80:
			d.buf = append(d.buf, c)
			d.pos++
		default:
			at := d.pos
			if !d.utf8Char() {
				return nil, false
			}
			d.buf = append(d.buf, d.in[at:d.pos]...)
		}
	}
	return nil, false
}

// utf8Char steps over one valid multi-byte UTF-8 character at pos.
func (d *fastDecoder) utf8Char() bool {
	r, size := utf8.DecodeRune(d.in[d.pos:])
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	d.pos += size
	return true
}

// escape decodes the escape at pos (a backslash).
func (d *fastDecoder) escape() (rune, bool) {
	r, next, ok := decodeEscape(d.in, d.pos)
	d.pos = next
	return r, ok
}

// number reads an RFC 8259 number and applies the I-JSON profile.
func (d *fastDecoder) number() (any, bool) {
	start := d.pos
	if !d.checkNumber() {
		return nil, false
	}
	return json.Number(d.string(d.in[start:d.pos], d.pos)), true
}

// checkNumber steps over an RFC 8259 number and applies the I-JSON profile
// (checkNumber).
func (d *fastDecoder) checkNumber() bool {
	start := d.pos
	fraction, exponent, ok := d.numberText()
	if !ok {
		return false
	}
	// checkNumber cannot fail for an integer of up to 15 digits (within
	// ±2^53), nor for a number with a fraction, no exponent and at most 300
	// characters (too short to overflow a double or to underflow to zero);
	// anything else gets the full check.
	short := d.pos-start <= 15 && !fraction
	if fraction && !exponent && d.pos-start <= 300 {
		short = true
	}
	return !(exponent || !short) || checkNumber(string(d.in[start:d.pos])) == nil
}

// numberText steps over an RFC 8259 number,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, which must end at a
// delimiter (white space, a comma, a closing bracket or the end), as in
// jsontext. It is the package's only number grammar: ValidNumber is it for
// a whole text.
func (d *fastDecoder) numberText() (fraction, exponent, ok bool) {
	if d.pos < len(d.in) && d.in[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.in) && d.in[d.pos] == '0':
		d.pos++
	case d.pos < len(d.in) && d.in[d.pos] >= '1' && d.in[d.pos] <= '9':
		d.digits()
	default:
		return false, false, false
	}
	if d.pos < len(d.in) && d.in[d.pos] == '.' {
		d.pos++
		if d.digits() == 0 {
			return false, false, false
		}
		fraction = true
	}
	if d.pos < len(d.in) && (d.in[d.pos] == 'e' || d.in[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.in) && (d.in[d.pos] == '+' || d.in[d.pos] == '-') {
			d.pos++
		}
		if d.digits() == 0 {
			return false, false, false
		}
		exponent = true
	}
	if d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r', ',', ']', '}':
		default:
			return false, false, false
		}
	}
	return fraction, exponent, true
}

// ValidNumber reports whether s is exactly one RFC 8259 number.
func ValidNumber[T string | []byte](s T) bool {
	d := fastDecoder{in: []byte(s)}
	_, _, ok := d.numberText()
	return ok && d.pos == len(d.in)
}

func (d *fastDecoder) digits() int {
	n := 0
	for d.pos < len(d.in) && d.in[d.pos] >= '0' && d.in[d.pos] <= '9' {
		d.pos++
		n++
	}
	return n
}
