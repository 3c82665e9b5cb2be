package ijson

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// RFC 8785 (JCS) canonical form, written by the package's scanner: parsing
// writes each value's canonical text into one buffer as it reads it, with
// each object's members in the order they were sent. An object whose
// members are already in RFC 8785 order (UTF-16 code units) needs nothing
// more, and when every object is in order that buffer is the answer.
// Otherwise each object that is out of order, or holds one that is, is
// recorded with the spans of its members, and a second pass copies the
// buffer with those members in sorted order. Every byte is copied at most
// twice whatever the nesting, so a deep document cannot make the work grow
// with its depth.
//
// It accepts what RFC 8785 canonicalizes: any JSON text without duplicate
// names, invalid UTF-8 or lone surrogates, whose numbers are finite
// doubles, nested at most MaxCanonicalDepth levels. The tests hold it to
// gowebpki/jcs, byte for byte and refusal for refusal.

// MaxCanonicalDepth is the nesting limit of arrays and objects in a
// canonicalized text: gowebpki/jcs's, so the two refuse the same documents.
const MaxCanonicalDepth = 10000

// maxCanonicalInput bounds the texts canonicalized, so every offset into
// the input and output fits an int32 (no value's canonical text is more
// than 6 times its input, \u0001 for a raw byte 0x01 being the worst).
const maxCanonicalInput = 1 << 28

// ErrTooLarge is the Kind of an Error for a text too large to canonicalize.
var ErrTooLarge = errors.New("is too large to canonicalize")

// Canonicalizer writes the RFC 8785 form of one JSON text after another,
// reusing its working memory from one to the next. The zero value is ready
// to use; it is not safe for concurrent use.
type Canonicalizer struct {
	scratch canonScratch
}

// canonScratch is a canonicalization's working memory.
type canonScratch struct {
	out     []byte        // canonical text, members in input order
	decoded []byte        // decoded member names that contained escapes
	escaped []byte        // the string being decoded (fastDecoder.buf)
	open    []canonMember // members of the objects being parsed
	mems    []canonMember // members of the objects in objs, each object's contiguous and sorted
	objs    []canonObject // objects to rewrite, in document order
}

// Footprint is about how many bytes of working memory c holds, for a
// caller that keeps Canonicalizers and lets go of large ones.
func (c *Canonicalizer) Footprint() int {
	s := &c.scratch
	return cap(s.out) + cap(s.decoded) + cap(s.escaped) + 16*(cap(s.open)+cap(s.mems)) + 20*cap(s.objs)
}

// canonMember is one member of an object. It holds offsets, not slices, so
// the lists of members hold no pointers for the garbage collector to scan
// or to put write barriers on while they are sorted.
type canonMember struct {
	nameStart, nameEnd int32 // decoded name: in[nameStart:nameEnd], or decoded[-nameStart-1:nameEnd] when negative
	start, end         int32 // its `"name":value` text in out
}

// canonObject is an object whose members must be written in another order,
// or that holds such an object.
type canonObject struct {
	start, end   int32 // its text in out, braces included
	first, count int32 // its members in mems, sorted
	after        int32 // index in objs just past the objects inside it
}

// canonWriter is the state of one canonicalization: the package's scanner
// and the canonical text it writes.
type canonWriter struct {
	fastDecoder
	// A copy of the scratch memory, not a pointer to it: the writer lives
	// on the stack, so growing these slices stores no pointer into the
	// heap and costs no write barrier while the collector runs.
	canonScratch
}

// Append appends the RFC 8785 form of the JSON text in to dst. depth is the
// nesting level the text sits at (0 for a whole document), so that a value
// placed inside a larger document meets the limit at the same place. On
// error, an *Error, dst is returned unchanged. The result keeps no
// reference to c's memory.
func (c *Canonicalizer) Append(dst, in []byte, depth int) ([]byte, error) {
	if len(in) > maxCanonicalInput {
		return dst, &Error{Kind: ErrTooLarge}
	}
	s := &c.scratch
	s.out, s.decoded, s.open, s.mems, s.objs = s.out[:0], s.decoded[:0], s.open[:0], s.mems[:0], s.objs[:0]
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
	w := canonWriter{fastDecoder: fastDecoder{in: in, maxDepth: MaxCanonicalDepth - depth, buf: s.escaped}, canonScratch: *s}
	w.skipSpace()
	_, ok := w.value(0)
	ok = ok && w.atEnd()
	w.canonScratch.escaped = w.buf
	*s = w.canonScratch // keep the grown memory for the next text
	if !ok {
		return dst, canonicalError(in, depth)
	}
	if cap(dst)-len(dst) < len(s.out) {
		dst = append(make([]byte, 0, len(dst)+len(s.out)), dst...)
	}
	if len(s.objs) == 0 {
		return append(dst, s.out...), nil
	}
	return w.emit(dst, 0, int32(len(s.out)), 0), nil
}

// canonicalError says what is wrong with in, a text the canonical writer
// refused at the given depth, as Decode words it: the writer only gives up.
func canonicalError(in []byte, depth int) error {
	if _, err := decodeJSONText(in, MaxCanonicalDepth-depth); err != nil {
		return err
	}
	// Decode refuses at least what the writer refuses but for nothing
	// else; the writer giving up on what Decode accepts is a bug, reported
	// without quoting the input.
	return &Error{Kind: ErrSyntax}
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

// value writes the value at pos (whitespace skipped) at the given depth. It
// reports whether the value holds an object that must be rewritten, and
// ok false wherever fastDecoder.value gives up, but for numbers: any
// finite double is canonicalized, not only I-JSON's.
func (w *canonWriter) value(depth int) (rewrite, ok bool) {
	if w.pos >= len(w.in) {
		return false, false
	}
	switch c := w.in[w.pos]; {
	case c == '{':
		return w.object(depth)
	case c == '[':
		return w.array(depth)
	case c == '"':
		_, _, ok := w.str()
		return false, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return false, w.number()
	case c == 't':
		return false, w.word("true")
	case c == 'f':
		return false, w.word("false")
	case c == 'n':
		return false, w.word("null")
	}
	return false, false
}

// word writes a literal.
func (w *canonWriter) word(word string) bool {
	if !w.literal(word) {
		return false
	}
	w.out = append(w.out, word...)
	return true
}

func (w *canonWriter) array(depth int) (bool, bool) {
	if depth >= w.maxDepth {
		return false, false
	}
	w.pos++
	w.out = append(w.out, '[')
	w.skipSpace()
	if w.pos < len(w.in) && w.in[w.pos] == ']' {
		w.pos++
		w.out = append(w.out, ']')
		return false, true
	}
	rewrite := false
	for {
		w.skipSpace()
		r, ok := w.value(depth + 1)
		if !ok {
			return false, false
		}
		rewrite = rewrite || r
		more, ok := w.separator(']')
		if !ok {
			return false, false
		}
		if !more {
			w.out = append(w.out, ']')
			return rewrite, true
		}
		w.out = append(w.out, ',')
	}
}

func (w *canonWriter) object(depth int) (bool, bool) {
	if depth >= w.maxDepth {
		return false, false
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
				return false, false
			}
			start := int32(len(w.out))
			nameStart, nameEnd, ok := w.str()
			if !ok {
				return false, false
			}
			w.skipSpace()
			if w.pos >= len(w.in) || w.in[w.pos] != ':' {
				return false, false
			}
			w.pos++
			w.out = append(w.out, ':')
			w.skipSpace()
			r, ok := w.value(depth + 1)
			if !ok {
				return false, false
			}
			rewrite = rewrite || r
			w.open = append(w.open, canonMember{nameStart: nameStart, nameEnd: nameEnd, start: start, end: int32(len(w.out))})
			more, ok := w.separator('}')
			if !ok {
				return false, false
			}
			if !more {
				w.out = append(w.out, '}')
				break
			}
			w.out = append(w.out, ',')
		}
	}
	inOrder, ok := w.sortMembers(w.open[base:])
	if !ok {
		return false, false // a duplicate name
	}
	rewrite = rewrite || !inOrder
	if rewrite {
		w.objs[idx] = canonObject{
			start: w.objs[idx].start, end: int32(len(w.out)),
			first: int32(len(w.mems)), count: int32(len(w.open) - base), after: int32(len(w.objs)),
		}
		if w.mems == nil {
			w.mems = make([]canonMember, 0, max(32, 2*(len(w.open)-base)))
		}
		w.mems = append(w.mems, w.open[base:]...)
	} else {
		// Nothing inside needs rewriting either (rewrite would be set),
		// so every object recorded since idx is gone too.
		w.objs = w.objs[:idx]
	}
	w.open = w.open[:base]
	return rewrite, true
}

// sortMembers puts an object's members in RFC 8785 order. inOrder is true
// when they were sent in it; ok is false when two share a name.
func (w *canonWriter) sortMembers(members []canonMember) (inOrder, ok bool) {
	inOrder = true
	for i := 1; i < len(members); i++ {
		switch c := w.compareNames(members[i-1], members[i]); {
		case c == 0:
			return false, false
		case c > 0:
			inOrder = false
		}
	}
	if inOrder {
		return true, true
	}
	if len(members) > 12 {
		slices.SortFunc(members, w.compareNames)
	} else {
		// By insertion for the short lists most objects have, where it
		// beats a general sort's set-up.
		for i := 1; i < len(members); i++ {
			m := members[i]
			j := i
			for ; j > 0 && w.compareNames(members[j-1], m) > 0; j-- {
				members[j] = members[j-1]
			}
			members[j] = m
		}
	}
	for i := 1; i < len(members); i++ {
		if w.compareNames(members[i-1], members[i]) == 0 {
			return false, false
		}
	}
	return false, true
}

// memberName returns a member's decoded name.
func (w *canonWriter) memberName(m canonMember) []byte {
	if m.nameStart < 0 {
		return w.decoded[-m.nameStart-1 : m.nameEnd]
	}
	return w.in[m.nameStart:m.nameEnd]
}

func (w *canonWriter) compareNames(a, b canonMember) int {
	return compareUTF16(w.memberName(a), w.memberName(b))
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

// str writes the string at pos (its opening quote) in canonical form and
// returns where its decoded text is, in canonMember's encoding: in the
// input when it has no escapes (its bytes are then canonical as sent), else
// in w.decoded.
func (w *canonWriter) str() (start, end int32, ok bool) {
	quote := w.pos
	raw, plain, ok := w.plainStr()
	switch {
	case !ok:
		return 0, 0, false
	case plain:
		w.out = append(w.out, w.in[quote:w.pos]...)
		return int32(quote + 1), int32(w.pos - 1), true
	}
	b, ok := w.escapedStr(len(w.in) - len(raw))
	if !ok {
		return 0, 0, false
	}
	w.out = AppendCanonicalString(w.out, b)
	at := len(w.decoded)
	w.decoded = append(w.decoded, b...)
	return int32(-at - 1), int32(len(w.decoded)), true
}

// number writes the number at pos in canonical form: any RFC 8259 number
// that is a finite double (one that underflows is 0).
func (w *canonWriter) number() bool {
	start := w.pos
	if _, _, ok := w.numberText(); !ok {
		return false
	}
	tok := w.in[start:w.pos]
	if plainInteger(tok) {
		// Integers of up to 15 digits are exact doubles, and ES6 prints
		// them as written; only -0 changes.
		if string(tok) == "-0" {
			tok = tok[1:]
		}
		w.out = append(w.out, tok...)
		return true
	}
	if n, ok := appendPlainDecimal(w.out, tok); ok {
		w.out = n
		return true
	}
	f, err := jsonnum.ParseFloat(string(tok))
	if err != nil || math.IsInf(f, 0) {
		return false // out of double range
	}
	w.out = AppendES6Number(w.out, f)
	return true
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
		if c < '0' || c > '9' {
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
// every other number, which takes AppendES6Number.
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

// AppendES6Number appends f, finite, as ECMAScript's Number.prototype.toString
// writes it (RFC 8785 §3.2.2.3): the shortest digits that read back as f,
// without exponent from 1e-6 to 1e21, and 0 for either zero.
func AppendES6Number(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	format := byte('e')
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e21 {
		format = 'f'
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Go writes e+09 and e-07, ES6 e+9 and e-7.
		if e := bytes.IndexByte(dst[n:], 'e'); e >= 0 && dst[n+e+2] == '0' {
			dst = append(dst[:n+e+2], dst[n+e+3:]...)
		}
	}
	return dst
}

// AppendCanonicalString appends s, valid UTF-8, as an RFC 8785 string: the
// two-character escapes for the characters that have one, \u00xx for the
// other controls, everything else as it is. It is the package's only string
// escaper but for AppendMarshalString, which writes encoding/json's form.
func AppendCanonicalString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		dst = appendByteEscape(dst, c)
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
