package ijson

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// scanMode is what the scanner does with what it reads.
type scanMode uint8

const (
	modeBuild scanMode = iota // decode into Go values
	modeCheck                 // check only
	modeCanon                 // write the canonical form into out
)

// scanner reads a JSON text in one pass and stops at the first thing it
// does not accept.
type scanner struct {
	in       []byte
	text     string // in as a string, or "": see DecodeMembers
	pos      int
	maxDepth int
	mode     scanMode
	kind     error // why the scan stopped, when not ErrSyntax
	// anyNumber accepts every number of RFC 8259's grammar in modeCheck,
	// without the I-JSON range (SplitMembers).
	anyNumber bool
	// grammarOnly checks only RFC 8259's grammar, in modeCheck, as
	// encoding/json reads a text (SplitGrammarOnly): a string's invalid
	// UTF-8 and lone surrogates read as U+FFFD, names may repeat.
	grammarOnly bool
	// A copy of the working memory, not a pointer to it: the scanner lives
	// on the stack, so growing these slices stores no pointer into the heap
	// and costs no write barrier while the collector runs.
	Canonicalizer
}

// Member is one member of a JSON object, as sent and decoded.
type Member struct {
	Name  string
	Raw   []byte // the value exactly as sent (no surrounding whitespace), a slice of the input
	Value any    // Raw decoded as Decode(Raw, opts) decodes it
	// NameEnd and End are the offsets in the input just past the name's
	// closing quote and just past the value (SplitMembers only).
	NameEnd, End int
}

// DecodeMembers decodes data, one JSON object, member by member, each value
// as Decode would decode it on its own with opts (so depth counts from the
// member's value), and appends the members to dst. It is the fast path of a
// caller that reports problems per member itself: ok is false whenever
// Decode would fail on data or on a member's value, and the caller then
// takes its careful path to find out what.
//
// text is data as a string, or "". When given, every decoded string and
// number without escapes is a substring of text rather than a copy of its
// own, which spares an allocation each but keeps all of text in memory as
// long as any of them.
//
// decode, when not nil, names the members to decode: any other is checked
// exactly as those but not decoded, its Value nil (Decode(Raw, opts) would
// succeed). It is for values the caller may never need as Go values, and
// for members it will refuse by their names alone.
func DecodeMembers(dst []Member, data []byte, text string, opts *Options, decode func(name string) bool) (members []Member, ok bool) {
	if text != "" && len(text) != len(data) {
		text = "" // not data's text: copy every string
	}
	d := scanner{in: data, text: text, maxDepth: maxDepthOf(opts)}
	d.open = make([]canonMember, 0, 16) // room for a typical object's names
	d.skipSpace()
	if d.pos >= len(d.in) || d.in[d.pos] != '{' {
		return nil, false
	}
	members = dst
	for more := d.enter('}'); more; {
		nameStart, nameEnd, ok := d.str()
		if !ok || !d.colon() {
			return nil, false
		}
		name := d.stringAt(nameStart, nameEnd)
		d.mode = modeBuild
		if decode != nil && !decode(name) {
			d.mode = modeCheck
		}
		start := d.pos
		v, ok := d.value(0)
		if !ok {
			return nil, false
		}
		if d.mode == modeCheck {
			v = nil // true or false was read, not decoded
		}
		d.open = append(d.open, canonMember{nameStart: nameStart, nameEnd: nameEnd})
		members = append(members, Member{Name: name, Raw: data[start:d.pos:d.pos], Value: v})
		if more, ok = d.separator('}'); !ok {
			return nil, false
		}
	}
	if _, unique := d.sortMembers(d.open); !unique || !d.atEnd() {
		return nil, false
	}
	if members == nil {
		members = []Member{} // an empty object
	}
	return members, true
}

// SplitChecks says what SplitMembers checks besides RFC 8259's grammar
// and a nesting limit of MaxCanonicalDepth levels (a number's range is
// never checked).
type SplitChecks int

const (
	// SplitLikeJSONText checks what jsontext's decoder checks by default:
	// valid UTF-8 and no lone surrogate, unique names in every object.
	SplitLikeJSONText SplitChecks = iota
	// SplitGrammarOnly checks the grammar alone, as encoding/json's Valid
	// does: invalid UTF-8 and lone surrogates read as U+FFFD (in names too,
	// as encoding/json decodes them), names may repeat at any level.
	SplitGrammarOnly
)

// SplitMembers splits data, one JSON object, into its members as sent, in
// order, with the checks of checks. Values are not decoded (Member.Value
// is nil). It is the careful path of a caller that names the member a
// problem lies in: on the first problem it returns the members read before
// it and an *Error, and in is the index in members of the member whose
// value (or the colon before it) holds the problem (that member's Raw is
// nil), or -1 when the problem is outside every value (data is no object,
// a name or a separator is malformed, a name is repeated, or data goes on
// after the object).
func SplitMembers(data []byte, checks SplitChecks) (members []Member, in int, err error) {
	d := scanner{in: data, maxDepth: MaxCanonicalDepth, mode: modeCheck, anyNumber: true, grammarOnly: checks == SplitGrammarOnly}
	stop := func(in int) ([]Member, int, error) {
		e := &Error{Kind: d.kind, Offset: int64(d.pos)}
		switch e.Kind {
		case nil:
			e.Kind = ErrSyntax
		case ErrDepth:
			e.Limit = d.maxDepth
		}
		return members, in, e
	}
	d.skipSpace()
	if d.pos >= len(d.in) || d.in[d.pos] != '{' {
		return stop(-1)
	}
	var names map[string]bool
	for more := d.enter('}'); more; {
		nameStart, nameEnd, ok := d.str()
		if !ok {
			return stop(-1)
		}
		name := d.stringAt(nameStart, nameEnd)
		d.drop(nameStart)
		if !d.grammarOnly {
			if names == nil {
				names = make(map[string]bool)
			}
			if names[name] {
				d.fail(ErrDuplicate) // before the colon, as jsontext
				return stop(-1)
			}
			names[name] = true
		}
		members = append(members, Member{Name: name, NameEnd: d.pos})
		if !d.colon() {
			return stop(len(members) - 1)
		}
		start := d.pos
		if _, ok := d.value(1); !ok {
			return stop(len(members) - 1)
		}
		members[len(members)-1].Raw = data[start:d.pos:d.pos]
		members[len(members)-1].End = d.pos
		if more, ok = d.separator('}'); !ok {
			return stop(-1)
		}
	}
	if !d.atEnd() {
		d.fail(ErrTrailing)
		return stop(-1)
	}
	return members, -1, nil
}

// scanWhole scans data as one whole JSON text in mode, returning the value
// (modeBuild) or the *Error that says why and where the scan stopped.
func (d *scanner) scanWhole() (any, error) {
	d.skipSpace()
	v, ok := d.value(0)
	if ok && d.atEnd() {
		return v, nil
	}
	e := &Error{Kind: d.kind, Offset: int64(d.pos)}
	switch {
	case ok:
		e.Kind = ErrTrailing
	case e.Kind == nil:
		e.Kind = ErrSyntax
	case e.Kind == ErrDepth:
		e.Limit = d.maxDepth
	}
	return nil, e
}

// fail notes why the scan stops and returns false.
func (d *scanner) fail(kind error) bool {
	d.kind = kind
	return false
}

// put writes b to the canonical form, in modeCanon.
func (d *scanner) put(b ...byte) {
	if d.mode == modeCanon {
		d.out = append(d.out, b...)
	}
}

// enter steps over the opening byte of the object or array at pos and the
// white space after it. more is true when a member or an element follows,
// false when closing does (it is stepped over too).
func (d *scanner) enter(closing byte) (more bool) {
	d.put(d.in[d.pos])
	d.pos++
	d.skipSpace()
	if d.pos < len(d.in) && d.in[d.pos] == closing {
		d.pos++
		d.put(closing)
		return false
	}
	return true
}

// separator steps over the white space and the comma or closing byte after
// a member or an element, and the white space after a comma: more is true
// after a comma, false after closing, and ok is false for anything else.
func (d *scanner) separator(closing byte) (more, ok bool) {
	d.skipSpace()
	if d.pos >= len(d.in) {
		return false, false
	}
	c := d.in[d.pos]
	if c != ',' && c != closing {
		return false, false
	}
	d.pos++
	d.put(c)
	if c == ',' {
		d.skipSpace()
	}
	return c == ',', true
}

func maxDepthOf(opts *Options) int {
	if opts != nil && opts.MaxDepth > 0 {
		return min(opts.MaxDepth, MaxCanonicalDepth)
	}
	return DefaultMaxDepth
}

// atEnd reports whether only whitespace is left.
func (d *scanner) atEnd() bool {
	d.skipSpace()
	return d.pos == len(d.in)
}

func (d *scanner) skipSpace() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value reads the value at pos (whitespace skipped) at the given depth,
// refusing a container at depth >= maxDepth. It returns the value in
// modeBuild; what it returns in the other modes means nothing (true and
// false come back as read).
func (d *scanner) value(depth int) (any, bool) {
	if d.pos >= len(d.in) {
		return nil, false
	}
	switch c := d.in[d.pos]; {
	case c == '{' || c == '[':
		switch {
		case depth >= d.maxDepth:
			return nil, d.fail(ErrDepth)
		case c == '[':
			return d.array(depth)
		case d.mode == modeBuild:
			return d.object(depth)
		}
		return nil, d.members(depth)
	case c == '"':
		start, end, ok := d.str()
		var s any
		if ok && d.mode == modeBuild {
			s = d.stringAt(start, end)
		}
		d.drop(start)
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

// literal reads word at pos. A text that ends inside it stops the scan at
// its end, so that the error reads as a truncation, not as a syntax error.
func (d *scanner) literal(word string) bool {
	if len(d.in)-d.pos < len(word) || string(d.in[d.pos:d.pos+len(word)]) != word {
		if rest := d.in[d.pos:]; len(rest) < len(word) && word[:len(rest)] == string(rest) {
			d.pos = len(d.in)
		}
		return false
	}
	d.pos += len(word)
	if d.mode == modeCanon {
		d.out = append(d.out, word...)
	}
	return true
}

// object decodes the object at pos into a map, in modeBuild.
func (d *scanner) object(depth int) (any, bool) {
	obj := make(map[string]any)
	for more := d.enter('}'); more; {
		start, end, ok := d.str()
		if !ok {
			return nil, false
		}
		name := d.stringAt(start, end)
		d.drop(start)
		if _, dup := obj[name]; dup {
			return nil, d.fail(ErrDuplicate) // before the colon, as jsontext
		}
		if !d.colon() {
			return nil, false
		}
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		obj[name] = v
		if more, ok = d.separator('}'); !ok {
			return nil, false
		}
	}
	return obj, true
}

// members reads the object at pos in modeCheck or modeCanon. Its members
// stack up in d.open, where sorting them finds a duplicate name; in
// modeCanon an object whose members were sent out of order, or that holds
// such an object, is recorded in d.objs for emit, with its members sorted
// in d.mems.
func (d *scanner) members(depth int) bool {
	idx, base, decoded := len(d.objs), len(d.open), len(d.decoded)
	if d.mode == modeCanon {
		d.objs = append(d.objs, canonObject{start: len(d.out)})
	}
	for more := d.enter('}'); more; {
		start := len(d.out)
		nameStart, nameEnd, ok := d.str()
		if !ok || !d.colon() {
			return false
		}
		if _, ok := d.value(depth + 1); !ok {
			return false
		}
		d.open = append(d.open, canonMember{nameStart: nameStart, nameEnd: nameEnd, start: start, end: len(d.out)})
		if more, ok = d.separator('}'); !ok {
			return false
		}
	}
	inOrder, unique := d.sortMembers(d.open[base:])
	if !unique && !d.grammarOnly {
		return d.fail(ErrDuplicate)
	}
	if d.mode == modeCanon && (!inOrder || len(d.objs) > idx+1) {
		d.objs[idx] = canonObject{
			start: d.objs[idx].start, end: len(d.out),
			first: len(d.mems), count: len(d.open) - base, after: len(d.objs),
		}
		if d.mems == nil {
			d.mems = make([]canonMember, 0, max(32, 2*(len(d.open)-base)))
		}
		d.mems = append(d.mems, d.open[base:]...)
	} else {
		// Nothing inside needs rewriting either, so every object recorded
		// since idx is gone too.
		d.objs = d.objs[:idx]
	}
	// The names are sorted: they are no longer needed.
	d.open, d.decoded = d.open[:base], d.decoded[:decoded]
	return true
}

// colon steps over the colon after a member name and the white space
// around it.
func (d *scanner) colon() bool {
	d.skipSpace()
	if d.pos >= len(d.in) || d.in[d.pos] != ':' {
		return false
	}
	d.pos++
	d.put(':')
	d.skipSpace()
	return true
}

func (d *scanner) array(depth int) (any, bool) {
	arr := []any{}
	for more := d.enter(']'); more; {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		if d.mode == modeBuild {
			arr = append(arr, v)
		}
		if more, ok = d.separator(']'); !ok {
			return nil, false
		}
	}
	if d.mode != modeBuild {
		return nil, true // not an empty []any, which is a non-nil any
	}
	return arr, true
}

// str reads the string whose opening quote is at pos (ok is false for any
// other byte), writing its canonical form in modeCanon, and returns where its
// decoded text is: in[start:end] when it has no escapes (canonical as sent),
// else decoded[-start-1:end]. Escapes are decoded as jsontext decodes them; a
// lone or misordered surrogate is refused, as jsontext refuses it.
func (d *scanner) str() (start, end int, ok bool) {
	if d.pos >= len(d.in) || d.in[d.pos] != '"' {
		return 0, 0, false
	}
	quote := d.pos
	d.pos++
	// at is where the decoded text starts in d.decoded once an escape is
	// met, and in[from:pos] the text read since then that is not yet there.
	at, from := -1, d.pos
	for {
		d.pos = plainRun(d.in, d.pos)
		if d.pos >= len(d.in) {
			return 0, 0, false
		}
		switch c := d.in[d.pos]; {
		case c == '"' && at < 0:
			d.pos++
			d.put(d.in[quote:d.pos]...)
			return quote + 1, d.pos - 1, true
		case c == '"':
			d.decoded = append(d.decoded, d.in[from:d.pos]...)
			d.pos++
			if d.mode == modeCanon {
				d.out = AppendCanonicalString(d.out, d.decoded[at:])
			}
			return -at - 1, len(d.decoded), true
		case c == '\\':
			if at < 0 {
				at = len(d.decoded)
			}
			d.decoded = append(d.decoded, d.in[from:d.pos]...)
			r, next, ok := decodeEscape(d.in, d.pos)
			if !ok {
				if !loneSurrogate(d.in, d.pos) {
					return 0, 0, false
				}
				if !d.grammarOnly {
					d.kind = ErrUTF8
					return 0, 0, false
				}
				r, next = utf8.RuneError, d.pos+6 // as encoding/json reads it
			}
			d.decoded = utf8.AppendRune(d.decoded, r)
			d.pos, from = next, next
		case c < 0x20:
			return 0, 0, false
		case !d.utf8Char(): // plainRun stops at no other ASCII byte
			if !d.grammarOnly || d.kind != ErrUTF8 {
				return 0, 0, false
			}
			// encoding/json reads an invalid byte as U+FFFD.
			d.kind = nil
			if at < 0 {
				at = len(d.decoded)
			}
			d.decoded = append(d.decoded, d.in[from:d.pos]...)
			d.decoded = utf8.AppendRune(d.decoded, utf8.RuneError)
			d.pos++
			from = d.pos
		}
	}
}

// loneSurrogate reports whether decodeEscape refused the escape at pos
// for a surrogate without its pair, as jsontext words it: a \u escape of a
// surrogate not followed by the escape of its pair. When the text ends
// where that escape could still follow, the problem is the end.
func loneSurrogate(in []byte, pos int) bool {
	if r, ok := hex4(in, pos+2); !ok || in[pos+1] != 'u' || !utf16.IsSurrogate(r) {
		return false
	}
	next := in[pos+6:]
	if len(next) >= 6 {
		return true
	}
	// Shorter, it is a cut-off low surrogate's escape when \udc00's tail
	// completes it into one.
	pair := append(next[:len(next):len(next)], `\udc00`[len(next):]...)
	lo, ok := hex4(pair, 2)
	return !ok || string(pair[:2]) != `\u` || lo < 0xdc00 || lo > 0xdfff
}

// textAt returns the decoded text of the string str located at start, end.
func (d *scanner) textAt(start, end int) []byte {
	if start < 0 {
		return d.decoded[-start-1 : end]
	}
	return d.in[start:end]
}

// stringAt returns textAt as a string: a substring of d.text when there is
// one and the string had no escapes, else a copy.
func (d *scanner) stringAt(start, end int) string {
	if start >= 0 && d.text != "" {
		return d.text[start:end]
	}
	return string(d.textAt(start, end))
}

// drop forgets the decoded text of a string str read at start, once it is
// no longer needed.
func (d *scanner) drop(start int) {
	if start < 0 {
		d.decoded = d.decoded[:-start-1]
	}
}

// utf8Char steps over one valid multi-byte UTF-8 character at pos.
func (d *scanner) utf8Char() bool {
	r, size := utf8.DecodeRune(d.in[d.pos:])
	if r == utf8.RuneError && size <= 1 {
		if utf8.FullRune(d.in[d.pos:]) { // else the text ends inside it: a syntax error
			d.kind = ErrUTF8
		}
		return false
	}
	d.pos += size
	return true
}

// number reads an RFC 8259 number: in modeCanon it writes its canonical
// form (any finite double), in the other modes it applies the I-JSON
// profile (checkNumber).
func (d *scanner) number() (any, bool) {
	start := d.pos
	end, fraction, exponent, ok := jsonnum.Scan(d.in, d.pos)
	d.pos = end
	switch {
	case !ok:
		return nil, false
	case d.mode == modeCanon:
		return nil, d.canonNumber(d.in[start:d.pos])
	// checkNumber cannot fail for an integer of up to 15 digits (within
	// ±2^53), nor for a number with a fraction, no exponent and at most 300
	// characters (too short to overflow a double or to underflow to zero).
	case !d.anyNumber && (exponent || (!fraction && d.pos-start > 15) || d.pos-start > 300) &&
		checkNumber(string(d.in[start:d.pos])) != nil:
		return nil, d.fail(ErrNumber)
	case d.mode == modeBuild:
		return json.Number(d.stringAt(start, d.pos)), true
	}
	return nil, true
}
