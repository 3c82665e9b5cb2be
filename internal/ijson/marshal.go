package ijson

import "unicode/utf8"

// htmlSafe holds the ASCII bytes encoding/json writes as they are when it
// escapes HTML: the printable ones but '"', '\\', '<', '>' and '&'.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf-1; c++ { // 0x7f is printable to JSON
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	t[utf8.RuneSelf-1] = true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendByteEscape appends the escape of the ASCII byte c inside a JSON
// string, as both RFC 8785 and encoding/json write it: \" and \\, the
// two-character escapes of the controls that have one, \u00xx for any
// other byte.
func appendByteEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
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
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// AppendMarshalString appends s as a JSON string exactly as json.Marshal
// writes a Go string (HTML escaping on): <, > and & as \u escapes, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped. Hand-written encoders that
// must produce json.Marshal's bytes (the store's records, a receipt's
// attestation) use it; FuzzAppendMarshalString compares the two.
func AppendMarshalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendByteEscape(dst, c) // also <, > and &, as \u00xx
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
