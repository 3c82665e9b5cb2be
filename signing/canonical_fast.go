package signing

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// The fast canonical encoder below produces exactly the bytes of
// jcs.Transform, and accepts exactly the inputs jcs.Transform accepts, in
// one pass over the input and a few allocations instead of a tree of nodes
// and a string per token (jcs costs about 40 µs and 100 times its input in
// memory per KB). Canonicalize and SignedDocument use it; whenever it
// refuses an input they run jcs.Transform instead, so every error a caller
// sees is still jcs's own. FuzzCanonicalFastMatchesJCS and the JCS suites
// in canonical_test.go hold the two to the same output.
//
// How it works: parsing writes each value's canonical text into one buffer
// as it reads it, with each object's members in the order they were sent.
// An object whose members are already in RFC 8785 order (UTF-16 code units)
// needs nothing more, and when every object is in order that buffer is the
// answer. Otherwise each object that is out of order, or holds one that is,
// is recorded with the spans of its members, and a second pass copies the
// buffer with those members in sorted order. Every byte is copied at most
// twice whatever the nesting, so a deep document cannot make the work grow
// with its depth.

// maxCanonicalDepth is jcs.Transform's nesting limit for arrays and objects,
// matched exactly so the two fail on the same documents.
const maxCanonicalDepth = 10000

// errFastCanonical is the fast encoder's only error. Callers never show it:
// they run jcs.Transform for the message.
var errFastCanonical = errors.New("not canonicalizable")

// canonWriter is the state of one fast canonicalization.
type canonWriter struct {
	in    []byte
	pos   int
	depth int
	// A copy of the scratch memory, not a pointer to it: the writer lives
	// on the stack, so growing these slices stores no pointer into the
	// heap and costs no write barrier while the collector runs.
	canonScratch
}

// canonScratch is a canonicalization's working memory. A Canonicalizer
// keeps it from one text to the next, so a run of texts allocates little
// more than their results.
type canonScratch struct {
	out   []byte        // canonical text, members in input order
	names []byte        // decoded member names that contained escapes
	open  []canonMember // members of the objects being parsed
	mems  []canonMember // members of the objects in objs, each object's contiguous and sorted
	objs  []canonObject // objects to rewrite, in document order
}

// footprint is about how many bytes the working memory holds.
func (s *canonScratch) footprint() int {
	return cap(s.out) + cap(s.names) + 16*(cap(s.open)+cap(s.mems)) + 20*cap(s.objs)
}

// canonMember is one member of an object. It holds offsets, not slices, so
// the lists of members hold no pointers for the garbage collector to scan
// or to put write barriers on while they are sorted.
type canonMember struct {
	nameStart, nameEnd int32 // decoded name: in[nameStart:nameEnd], or names[-nameStart-1:nameEnd] when negative
	start, end         int32 // its `"name":value` text in out
}

// canonObject is an object whose members must be written in another order,
// or that holds such an object.
type canonObject struct {
	start, end   int32 // its text in out, braces included
	first, count int32 // its members in mems, sorted
	after        int32 // index in objs just past the objects inside it
}

// maxFastInput bounds the inputs the fast encoder takes, so every offset
// into its input and output fits an int32 (no value's canonical text is
// more than 6 times its input, \u0001 for a raw byte 0x01 being the worst);
// larger inputs go to jcs.
const maxFastInput = 1 << 28

// name returns a member's decoded name.
func (w *canonWriter) name(m canonMember) []byte {
	if m.nameStart < 0 {
		return w.names[-m.nameStart-1 : m.nameEnd]
	}
	return w.in[m.nameStart:m.nameEnd]
}

func (w *canonWriter) compareNames(a, b canonMember) int {
	return compareUTF16(w.name(a), w.name(b))
}

// appendCanonical appends the RFC 8785 form of the JSON text in to dst.
// depth is the nesting level the text sits at (0 for a whole document), so
// that a value spliced into a larger document meets the limit at the same
// place. s is working memory to reuse, or nil. On error dst is returned
// unchanged.
func appendCanonical(dst, in []byte, depth int, s *canonScratch) ([]byte, error) {
	if len(in) > maxFastInput {
		return dst, errFastCanonical
	}
	owned := s == nil
	if owned {
		s = new(canonScratch)
	}
	s.out, s.names, s.open, s.mems, s.objs = s.out[:0], s.names[:0], s.open[:0], s.mems[:0], s.objs[:0]
	// The input's length is only a first guess at the output's (1e20 grows
	// fourfold); append grows the buffer past it when needed.
	if cap(s.out) < len(in) {
		s.out = make([]byte, 0, len(in)+16)
	}
	if s.open == nil {
		// Room for the members and objects of a typical answer up front
		// saves the first rounds of growth.
		s.open, s.objs = make([]canonMember, 0, 32), make([]canonObject, 0, 8)
	}
	w := canonWriter{in: in, depth: depth, canonScratch: *s}
	w.skipSpace()
	_, err := w.value()
	w.skipSpace()
	*s = w.canonScratch // keep the grown memory for the next text
	if err != nil {
		return dst, err
	}
	if w.pos != len(in) {
		return dst, errFastCanonical
	}
	if len(s.objs) == 0 && owned && len(dst) == 0 {
		return s.out, nil // already in order, and in memory nobody else holds
	}
	if cap(dst)-len(dst) < len(s.out) {
		dst = append(make([]byte, 0, len(dst)+len(s.out)), dst...)
	}
	if len(s.objs) == 0 {
		return append(dst, s.out...), nil
	}
	return w.emit(dst, 0, int32(len(s.out)), 0), nil
}

// emit appends out[lo:hi] to dst with the members of every recorded object
// in it in sorted order. objs[k] is the first recorded object that can
// start at or after lo.
func (w *canonWriter) emit(dst []byte, lo, hi, k int32) []byte {
	for int(k) < len(w.objs) && w.objs[k].start < hi {
		o := w.objs[k]
		dst = append(dst, w.out[lo:o.start]...)
		dst = append(dst, '{')
		inside := w.objs[k+1 : o.after]
		for i, m := range w.mems[o.first : o.first+o.count] {
			if i > 0 {
				dst = append(dst, ',')
			}
			j := sort.Search(len(inside), func(j int) bool { return inside[j].start >= m.start })
			dst = w.emit(dst, m.start, m.end, k+1+int32(j))
		}
		dst = append(dst, '}')
		lo, k = o.end, o.after
	}
	return append(dst, w.out[lo:hi]...)
}

// skipSpace skips the four JSON whitespace bytes.
func (w *canonWriter) skipSpace() {
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// value writes one value starting at pos (whitespace already skipped). It
// reports whether the value holds an object that must be rewritten.
func (w *canonWriter) value() (bool, error) {
	if w.pos >= len(w.in) {
		return false, errFastCanonical
	}
	switch w.in[w.pos] {
	case '{':
		return w.object()
	case '[':
		return w.array()
	case '"':
		w.pos++
		_, _, err := w.str(false)
		return false, err
	default:
		return false, w.scalar()
	}
}

func (w *canonWriter) array() (bool, error) {
	if w.depth++; w.depth > maxCanonicalDepth {
		return false, errFastCanonical
	}
	w.pos++
	w.out = append(w.out, '[')
	w.skipSpace()
	if w.pos < len(w.in) && w.in[w.pos] == ']' {
		w.pos++
		w.out = append(w.out, ']')
		w.depth--
		return false, nil
	}
	rewrite := false
	for {
		w.skipSpace()
		r, err := w.value()
		if err != nil {
			return false, err
		}
		rewrite = rewrite || r
		w.skipSpace()
		if w.pos >= len(w.in) {
			return false, errFastCanonical
		}
		switch w.in[w.pos] {
		case ',':
			w.pos++
			w.out = append(w.out, ',')
		case ']':
			w.pos++
			w.out = append(w.out, ']')
			w.depth--
			return rewrite, nil
		default:
			return false, errFastCanonical
		}
	}
}

func (w *canonWriter) object() (bool, error) {
	if w.depth++; w.depth > maxCanonicalDepth {
		return false, errFastCanonical
	}
	w.pos++
	idx := len(w.objs)
	w.objs = append(w.objs, canonObject{start: int32(len(w.out))})
	w.out = append(w.out, '{')
	base := len(w.open)
	rewrite := false
	w.skipSpace()
	if w.pos < len(w.in) && w.in[w.pos] == '}' {
		w.pos++
		w.out = append(w.out, '}')
	} else {
		for {
			w.skipSpace()
			if w.pos >= len(w.in) || w.in[w.pos] != '"' {
				return false, errFastCanonical
			}
			w.pos++
			start := int32(len(w.out))
			nameStart, nameEnd, err := w.str(true)
			if err != nil {
				return false, err
			}
			w.skipSpace()
			if w.pos >= len(w.in) || w.in[w.pos] != ':' {
				return false, errFastCanonical
			}
			w.pos++
			w.out = append(w.out, ':')
			w.skipSpace()
			r, err := w.value()
			if err != nil {
				return false, err
			}
			rewrite = rewrite || r
			w.open = append(w.open, canonMember{nameStart: nameStart, nameEnd: nameEnd, start: start, end: int32(len(w.out))})
			w.skipSpace()
			if w.pos >= len(w.in) {
				return false, errFastCanonical
			}
			c := w.in[w.pos]
			w.pos++
			if c == '}' {
				w.out = append(w.out, '}')
				break
			}
			if c != ',' {
				return false, errFastCanonical
			}
			w.out = append(w.out, ',')
		}
	}
	members := w.open[base:]
	sorted := true
	for i := 1; i < len(members); i++ {
		switch c := w.compareNames(members[i-1], members[i]); {
		case c == 0:
			return false, errFastCanonical // duplicate name
		case c > 0:
			sorted = false
		}
	}
	if !sorted {
		w.sortMembers(members)
		for i := 1; i < len(members); i++ {
			if w.compareNames(members[i-1], members[i]) == 0 {
				return false, errFastCanonical
			}
		}
		rewrite = true
	}
	if rewrite {
		w.objs[idx] = canonObject{
			start: w.objs[idx].start, end: int32(len(w.out)),
			first: int32(len(w.mems)), count: int32(len(members)), after: int32(len(w.objs)),
		}
		if w.mems == nil {
			w.mems = make([]canonMember, 0, max(32, 2*len(members)))
		}
		w.mems = append(w.mems, members...)
	} else {
		// Nothing inside needs rewriting either (rewrite would be set),
		// so every object recorded since idx is gone too.
		w.objs = w.objs[:idx]
	}
	w.open = w.open[:base]
	w.depth--
	return rewrite, nil
}

// sortMembers sorts an object's members by name: by insertion for the
// short lists most objects have, where it beats a general sort's set-up.
func (w *canonWriter) sortMembers(members []canonMember) {
	if len(members) > 12 {
		slices.SortFunc(members, w.compareNames)
		return
	}
	for i := 1; i < len(members); i++ {
		m := members[i]
		name := w.name(m)
		j := i
		for ; j > 0 && compareUTF16(w.name(members[j-1]), name) > 0; j-- {
			members[j] = members[j-1]
		}
		members[j] = m
	}
}

// compareUTF16 compares two valid UTF-8 strings in the order of their UTF-16
// code units (RFC 8785 §3.2.3). That is byte order except between a
// character in U+E000…U+FFFF (lead byte 0xEE or 0xEF) and one above U+FFFF
// (lead byte 0xF0…0xF4), whose UTF-16 form starts with a surrogate and so
// sorts first. Bytes from 0xEE up are always lead bytes, and the first
// difference of two valid strings with an equal prefix is either between two
// lead bytes or inside characters with the same lead byte, where byte order
// is right.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x >= 0xee && y >= 0xee && (x >= 0xf0) != (y >= 0xf0) {
			if x >= 0xf0 {
				return -1
			}
			return 1
		}
		return int(x) - int(y)
	}
	return len(a) - len(b)
}

// str writes the string starting at pos (just past its opening quote) in
// canonical form. For a member name it returns where the decoded name is, in
// canonMember's encoding: in the input when the name has no escapes, else in
// w.names.
func (w *canonWriter) str(isName bool) (nameStart, nameEnd int32, err error) {
	w.out = append(w.out, '"')
	start := w.pos
	escStart := -1 // where the decoded name starts in w.names, once an escape is seen
	for {
		i := ijson.PlainRun(w.in, w.pos)
		w.out = append(w.out, w.in[w.pos:i]...)
		if escStart >= 0 {
			w.names = append(w.names, w.in[w.pos:i]...)
		}
		w.pos = i
		if i >= len(w.in) {
			return 0, 0, errFastCanonical
		}
		switch c := w.in[i]; {
		case c == '"':
			w.pos++
			w.out = append(w.out, '"')
			switch {
			case !isName:
				return 0, 0, nil
			case escStart >= 0:
				return int32(-escStart - 1), int32(len(w.names)), nil
			default:
				return int32(start), int32(i), nil
			}
		case c < 0x20:
			return 0, 0, errFastCanonical // raw control character
		case c >= 0x80:
			r, size := utf8.DecodeRune(w.in[i:])
			if r == utf8.RuneError && size <= 1 {
				return 0, 0, errFastCanonical
			}
			w.out = append(w.out, w.in[i:i+size]...)
			if escStart >= 0 {
				w.names = append(w.names, w.in[i:i+size]...)
			}
			w.pos += size
		default: // backslash
			if isName && escStart < 0 {
				escStart = len(w.names)
				w.names = append(w.names, w.in[start:i]...)
			}
			r, err := w.escape()
			if err != nil {
				return 0, 0, err
			}
			w.out = appendCanonicalRune(w.out, r)
			if escStart >= 0 {
				w.names = utf8.AppendRune(w.names, r)
			}
		}
	}
}

// escape decodes the escape sequence at pos (a backslash) as jcs does: the
// JSON escapes, with a UTF-16 surrogate pair only as a high surrogate
// followed by a low one.
func (w *canonWriter) escape() (rune, error) {
	r, next, ok := ijson.DecodeEscape(w.in, w.pos)
	w.pos = next
	if !ok {
		return 0, errFastCanonical
	}
	return r, nil
}

// appendCanonicalRune appends r as it appears inside a canonical string:
// the two-character escapes for the characters that have one, \u00xx for
// the other controls, and the character itself otherwise.
func appendCanonicalRune(dst []byte, r rune) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 {
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
	}
	return utf8.AppendRune(dst, r)
}

// appendCanonicalString appends s, valid UTF-8, as a canonical JSON string.
func appendCanonicalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		j := ijson.PlainRunString(s, i)
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		if c := s[i]; c >= utf8.RuneSelf {
			dst = append(dst, c) // valid UTF-8 is written as it is
		} else {
			dst = appendCanonicalRune(dst, rune(c))
		}
	}
	return append(dst, '"')
}

// scalar writes a literal or a number: the bytes up to the next ',', ']',
// '}', whitespace or the end, as jcs delimits them.
func (w *canonWriter) scalar() error {
	start := w.pos
	for w.pos < len(w.in) {
		c := w.in[w.pos]
		if c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		w.pos++
	}
	tok := w.in[start:w.pos]
	switch string(tok) {
	case "true", "false", "null":
		w.out = append(w.out, tok...)
		return nil
	}
	if !validNumber(tok) {
		return errFastCanonical
	}
	if plainInteger(tok) {
		// Integers of up to 15 digits are exact doubles, and ES6 prints
		// them as written; only -0 changes.
		if string(tok) == "-0" {
			tok = tok[1:]
		}
		w.out = append(w.out, tok...)
		return nil
	}
	if n, ok := appendPlainDecimal(w.out, tok); ok {
		w.out = n
		return nil
	}
	f, err := jsonnum.ParseFloat(string(tok))
	if err != nil {
		return errFastCanonical // out of double range
	}
	text, err := jcs.NumberToJSON(f)
	if err != nil {
		return errFastCanonical
	}
	w.out = append(w.out, text...)
	return nil
}

// validNumber reports whether tok is an RFC 8259 number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(tok []byte) bool {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	switch {
	case i < len(tok) && tok[i] == '0':
		i++
	case i < len(tok) && tok[i] >= '1' && tok[i] <= '9':
		for i++; i < len(tok) && isDigit(tok[i]); i++ {
		}
	default:
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if i >= len(tok) || !isDigit(tok[i]) {
			return false
		}
		for ; i < len(tok) && isDigit(tok[i]); i++ {
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if i >= len(tok) || !isDigit(tok[i]) {
			return false
		}
		for ; i < len(tok) && isDigit(tok[i]); i++ {
		}
	}
	return i == len(tok)
}

// plainInteger reports whether tok, a valid number, is an integer of at most
// 15 digits without fraction or exponent.
func plainInteger(tok []byte) bool {
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, c := range digits {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// appendPlainDecimal appends the canonical form of tok, a valid number,
// when it can be had without converting to binary and back: a number
// without exponent, at most 15 digits before the point and 15 significant
// digits in all, and at least 1e-6 when not zero. Any decimal of at most
// 15 significant digits is the shortest text that reads back as its double
// (no two such decimals share a double), and ES6 prints numbers from 1e-6
// to 1e21 without exponent, so the canonical text is tok with the trailing
// zeros of its fraction, a point left with no fraction, and the sign of a
// zero dropped: 25.0 is 25, 135.50 is 135.5, -0.0 is 0. ok is false for
// every other number, which takes jcs.NumberToJSON.
func appendPlainDecimal(dst, tok []byte) ([]byte, bool) {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if bytes.ContainsAny(tok, "eE") {
		return dst, false
	}
	intPart, frac, _ := bytes.Cut(tok, []byte{'.'})
	if len(intPart) > 15 {
		return dst, false
	}
	frac = bytes.TrimRight(frac, "0")
	var significant int
	if string(intPart) == "0" {
		zeros := len(frac) - len(bytes.TrimLeft(frac, "0"))
		if len(frac) == 0 {
			return append(dst, '0'), true // a zero, of either sign
		}
		if zeros >= 6 { // below 1e-6: ES6 writes an exponent
			return dst, false
		}
		significant = len(frac) - zeros
	} else {
		significant = len(intPart) + len(frac)
	}
	if significant > 15 {
		return dst, false
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, intPart...)
	if len(frac) > 0 {
		dst = append(dst, '.')
		dst = append(dst, frac...)
	}
	return dst, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
