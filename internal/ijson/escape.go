package ijson

// Strings: finding the runs of bytes a string holds as they are, and
// decoding escape sequences strictly (the JSON escapes, and a UTF-16
// surrogate only as a high surrogate followed by an escaped low one), for
// every scan of this package.

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
)

// plainRun returns the end of the run at in[i:] of printable ASCII other
// than '"' and '\\', the bytes a string holds as they are. It tests eight
// bytes at a time while it can (stopBytes), so a short string costs one
// test whatever its length.
func plainRun(in []byte, i int) int {
	for ; i+8 <= len(in); i += 8 {
		if stop := stopBytes(binary.LittleEndian.Uint64(in[i:])); stop != 0 {
			return i + bits.TrailingZeros64(stop)/8
		}
	}
	for i < len(in) && plainByte(in[i]) {
		i++
	}
	return i
}

// stopBytes has the high bit set of the lowest byte of v (little-endian)
// that is below 0x20, a quote, a backslash or at least 0x80, if there is
// one, and is zero when there is none: the classic "has a byte less than
// n" and "has a zero byte" tests, whose lowest flag is exact (a borrow only
// flags bytes above the first one flagged).
func stopBytes(v uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := v^(ones*'"'), v^(ones*'\\')
	control := (v - ones*0x20) &^ v
	quotes := (quote - ones) &^ quote
	backslashes := (backslash - ones) &^ backslash
	return (control | quotes | backslashes | v) & highs
}

func plainByte(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c < 0x80
}

// decodeEscape decodes the escape sequence that starts at in[pos], a backslash. It
// returns the rune and the position after the sequence, or ok=false for an
// invalid escape or a lone or misordered surrogate.
func decodeEscape(in []byte, pos int) (r rune, next int, ok bool) {
	if pos+1 >= len(in) {
		return 0, pos, false
	}
	c := in[pos+1]
	pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), pos, true
	case 'b':
		return '\b', pos, true
	case 'f':
		return '\f', pos, true
	case 'n':
		return '\n', pos, true
	case 'r':
		return '\r', pos, true
	case 't':
		return '\t', pos, true
	case 'u':
	default:
		return 0, pos, false
	}
	hi, ok := hex4(in, pos)
	if !ok {
		return 0, pos, false
	}
	pos += 4
	if !utf16.IsSurrogate(hi) {
		return hi, pos, true
	}
	if hi > 0xdbff || pos+2 > len(in) || in[pos] != '\\' || in[pos+1] != 'u' {
		return 0, pos, false
	}
	lo, ok := hex4(in, pos+2)
	if !ok || lo < 0xdc00 || lo > 0xdfff {
		return 0, pos, false
	}
	return utf16.DecodeRune(hi, lo), pos + 6, true
}

// hex4 reads four hex digits at in[pos].
func hex4(in []byte, pos int) (rune, bool) {
	if pos+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[pos : pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
