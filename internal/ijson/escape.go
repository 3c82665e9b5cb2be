package ijson

// Strings: finding the runs of bytes a string holds as they are, and
// decoding escape sequences strictly (the JSON escapes, and a UTF-16
// surrogate only as a high surrogate followed by an escaped low one), for
// every scan of this package.

import (
	"encoding/hex"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// plainRun returns the end of the run at in[i:] of printable ASCII other
// than '"' and '\\', the bytes a string holds as they are.
func plainRun(in []byte, i int) int {
	for i < len(in) && in[i] >= 0x20 && in[i] != '"' && in[i] != '\\' && in[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// The two-character escapes: a backslash and escapeNames[i] stand for
// escapedBytes[i].
const escapeNames, escapedBytes = `"\/bfnrt`, "\"\\/\b\f\n\r\t"

// decodeEscape decodes the escape sequence that starts at in[pos], a backslash. It
// returns the rune and the position after the sequence, or ok=false for an
// invalid escape or a lone or misordered surrogate.
func decodeEscape(in []byte, pos int) (r rune, next int, ok bool) {
	if pos+1 >= len(in) {
		return 0, pos, false
	}
	c := in[pos+1]
	pos += 2
	if i := strings.IndexByte(escapeNames, c); i >= 0 {
		return rune(escapedBytes[i]), pos, true
	}
	if c != 'u' {
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
	if pos+2 > len(in) || in[pos] != '\\' || in[pos+1] != 'u' {
		return 0, pos, false
	}
	lo, ok := hex4(in, pos+2)
	// DecodeRune gives U+FFFD unless hi and lo are a high and a low surrogate.
	if r = utf16.DecodeRune(hi, lo); !ok || r == utf8.RuneError {
		return 0, pos, false
	}
	return r, pos + 6, true
}

// hex4 reads four hex digits at in[pos].
func hex4(in []byte, pos int) (rune, bool) {
	var b [2]byte
	if pos+4 > len(in) {
		return 0, false
	}
	if _, err := hex.Decode(b[:], in[pos:pos+4]); err != nil {
		return 0, false
	}
	return rune(b[0])<<8 | rune(b[1]), true
}
