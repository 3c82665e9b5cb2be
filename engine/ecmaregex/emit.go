package ecmaregex

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
)

// maxRepeat is the largest count RE2 accepts in {n,m}.
const maxRepeat = 1000

// writeLiteral writes one code point as an RE2 atom. Go strings hold no
// surrogates (invalid UTF-8 decodes to U+FFFD), so a lone surrogate escape
// matches nothing.
func writeLiteral(b *strings.Builder, r rune) {
	if utf16.IsSurrogate(r) {
		b.WriteString(`[^\x00-\x{10ffff}]`)
		return
	}
	writeRune(b, r, false)
}

// writeClass writes a character class. ECMA-262's empty class [] matches
// nothing and [^] matches any character; RE2 has no empty class, so both are
// spelled with the full range.
func writeClass(b *strings.Builder, negate bool, items []classItem) {
	var body strings.Builder
	for _, it := range items {
		switch {
		case !it.isSet:
			writeRange(&body, it.lo, it.hi)
		case it.set.re2 != "" && it.set.neg:
			body.WriteString(`\P{` + it.set.re2 + `}`)
		case it.set.re2 != "":
			body.WriteString(`\p{` + it.set.re2 + `}`)
		default:
			for _, r := range it.set.set {
				writeRange(&body, r.lo, r.hi)
			}
		}
	}
	switch {
	case body.Len() == 0 && negate:
		b.WriteString(`[\x00-\x{10ffff}]`)
	case body.Len() == 0:
		b.WriteString(`[^\x00-\x{10ffff}]`)
	case negate:
		b.WriteString("[^" + body.String() + "]")
	default:
		b.WriteString("[" + body.String() + "]")
	}
}

// writeRange writes a class range, leaving out the surrogates, which no Go
// string holds and which RE2 would read as U+FFFD.
func writeRange(b *strings.Builder, lo, hi rune) {
	if lo <= surrogateMax && hi >= surrogateMin {
		if lo < surrogateMin {
			writeRange(b, lo, surrogateMin-1)
		}
		lo = surrogateMax + 1
	}
	if lo > hi {
		return
	}
	writeRune(b, lo, true)
	if hi != lo {
		b.WriteByte('-')
		writeRune(b, hi, true)
	}
}

const surrogateMin, surrogateMax = 0xd800, 0xdfff

// writeRune writes one code point so that RE2 reads it literally.
func writeRune(b *strings.Builder, r rune, inClass bool) {
	switch {
	case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'):
		b.WriteRune(r)
	case !inClass && r > ' ' && r < unicode.MaxASCII:
		b.WriteString(regexp.QuoteMeta(string(r)))
	default:
		fmt.Fprintf(b, `\x{%x}`, r)
	}
}
