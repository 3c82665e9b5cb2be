package ijson

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

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
// It also bounds Options.MaxDepth.
const MaxCanonicalDepth = 10000

// Canonicalizer writes the RFC 8785 form of one JSON text after another,
// reusing its working memory (a scan's, held in its fields) from one to the
// next. The zero value is ready to use; it is not safe for concurrent use.
type Canonicalizer struct {
	out     []byte        // canonical text, members in input order
	decoded []byte        // decoded strings that contained escapes
	open    []canonMember // members of the objects being read
	mems    []canonMember // members of the objects in objs, each object's contiguous and sorted
	objs    []canonObject // objects to rewrite, in document order
}

// Footprint is about how many bytes of working memory c holds, for a
// caller that keeps Canonicalizers and lets go of large ones.
func (c *Canonicalizer) Footprint() int {
	return cap(c.out) + cap(c.decoded) + 32*(cap(c.open)+cap(c.mems)) + 40*cap(c.objs)
}

// canonMember is one member of an object. It holds offsets, not slices, so
// the lists of members hold no pointers for the garbage collector to scan
// or to put write barriers on while they are sorted.
type canonMember struct {
	nameStart, nameEnd int // decoded name, as str returns it; void once the object is read
	start, end         int // its `"name":value` text in out
}

// canonObject is an object whose members must be written in another order,
// or that holds such an object.
type canonObject struct {
	start, end   int // its text in out, braces included
	first, count int // its members in mems, sorted
	after        int // index in objs just past the objects inside it
}

// Append appends the RFC 8785 form of the JSON text in to dst. depth is the
// nesting level the text sits at (0 for a whole document), so that a value
// placed inside a larger document meets the limit at the same place. On
// error, an *Error, dst is returned unchanged. The result keeps no
// reference to c's memory.
func (c *Canonicalizer) Append(dst, in []byte, depth int) ([]byte, error) {
	c.out, c.decoded, c.open, c.mems, c.objs = c.out[:0], c.decoded[:0], c.open[:0], c.mems[:0], c.objs[:0]
	// The input's length is only a first guess at the output's (1e20 grows
	// fourfold); append grows the buffer past it when needed.
	if cap(c.out) < len(in) {
		c.out = make([]byte, 0, len(in)+16)
	}
	if c.open == nil {
		// Room for the members and objects of a typical answer up front
		// saves the first rounds of growth.
		c.open, c.objs = make([]canonMember, 0, 32), make([]canonObject, 0, 8)
	}
	d := scanner{in: in, maxDepth: MaxCanonicalDepth - depth, mode: modeCanon, Canonicalizer: *c}
	_, err := d.scanWhole()
	*c = d.Canonicalizer // keep the grown memory for the next text
	if err != nil {
		return dst, err
	}
	return c.emit(slices.Grow(dst, len(c.out)), 0, len(c.out), 0), nil
}

// emit appends out[lo:hi] to dst with the members of every recorded object
// in it in sorted order. objs[k] is the first recorded object that can
// start at or after lo.
func (c *Canonicalizer) emit(dst []byte, lo, hi, k int) []byte {
	for k < len(c.objs) && c.objs[k].start < hi {
		o := c.objs[k]
		dst = append(dst, c.out[lo:o.start]...)
		dst = append(dst, '{')
		inside := c.objs[k+1 : o.after]
		for i, m := range c.mems[o.first : o.first+o.count] {
			if i > 0 {
				dst = append(dst, ',')
			}
			j := sort.Search(len(inside), func(j int) bool { return inside[j].start >= m.start })
			dst = c.emit(dst, m.start, m.end, k+1+j)
		}
		dst = append(dst, '}')
		lo, k = o.end, o.after
	}
	return append(dst, c.out[lo:hi]...)
}

// sortMembers puts an object's members in RFC 8785 order. inOrder is true
// when they were sent in it; ok is false when two share a name.
func (d *scanner) sortMembers(members []canonMember) (inOrder, ok bool) {
	// In order with no name twice is strictly ascending: equal sorts as less.
	strictly := func(a, b canonMember) int { return cmp.Or(d.compareNames(a, b), -1) }
	if slices.IsSortedFunc(members, strictly) {
		return true, true
	}
	slices.SortFunc(members, d.compareNames)
	return false, slices.IsSortedFunc(members, strictly)
}

func (d *scanner) compareNames(a, b canonMember) int {
	return compareUTF16(d.textAt(a.nameStart, a.nameEnd), d.textAt(b.nameStart, b.nameEnd))
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

// canonNumber writes tok, an RFC 8259 number, in canonical form when it is
// a finite double (one that underflows is 0).
func (d *scanner) canonNumber(tok []byte) bool {
	f, err := jsonnum.ParseFloat(string(tok))
	if err != nil || math.IsInf(f, 0) {
		return d.fail(ErrNumber) // out of double range
	}
	d.out = appendES6Number(d.out, f)
	return true
}

// appendES6Number appends f, finite, as ECMAScript's Number.prototype.toString
// writes it (RFC 8785 §3.2.2.3): the shortest digits that read back as f,
// without exponent from 1e-6 to 1e21, and 0 for either zero.
func appendES6Number(dst []byte, f float64) []byte {
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
// escaper (encoding/json's form is left to json.Marshal).
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

// appendByteEscape appends the escape of the ASCII byte c inside a JSON
// string, as RFC 8785 writes it: the two-character escape when c has one,
// else \u00xx.
func appendByteEscape(dst []byte, c byte) []byte {
	if i := strings.IndexByte(escapedBytes, c); i >= 0 {
		return append(dst, '\\', escapeNames[i])
	}
	return hex.AppendEncode(append(dst, '\\', 'u', '0', '0'), []byte{c})
}

// AppendCanonical appends the RFC 8785 form of the JSON text in to dst, as
// Canonicalizer.Append does, with a spare Canonicalizer: the one way the
// service canonicalizes. Its working memory is reused from one call to the
// next, whichever goroutine makes it; one that a large text has left
// holding more than maxPooledScratch is dropped after use, so that the
// memory does not stay. Nothing of a kept one reaches a result, as every
// canonicalization resets its working memory. On error, an *Error, dst is
// returned unchanged.
func AppendCanonical(dst, in []byte, depth int) ([]byte, error) {
	c, ok := canonicalizers.Get().(*Canonicalizer)
	if !ok {
		c = new(Canonicalizer)
	}
	out, err := c.Append(dst, in, depth)
	if c.Footprint() <= maxPooledScratch {
		canonicalizers.Put(c)
	}
	return out, err
}

// canonicalizers holds the spare Canonicalizers of AppendCanonical.
var canonicalizers sync.Pool

const maxPooledScratch = 64 << 10
