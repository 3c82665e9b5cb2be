package ecmaregex

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// maxRepeat is the largest count RE2 accepts in {n,m}.
const maxRepeat = 1000

// emitter writes a parsed pattern as RE2 syntax.
type emitter struct {
	b     strings.Builder
	names map[string]bool // named groups written so far (RE2 refuses duplicates)
}

// emit writes n, in a context where the modifiers f are in force.
func (e *emitter) emit(n node, f flags) error {
	switch n := n.(type) {
	case alternation:
		for i, a := range n.alts {
			if i > 0 {
				e.b.WriteByte('|')
			}
			if err := e.emit(a, f); err != nil {
				return err
			}
		}
	case concat:
		for _, t := range n.terms {
			if err := e.emit(t, f); err != nil {
				return err
			}
		}
	case literal:
		if isSurrogate(n.r) {
			// Go strings hold no surrogates (invalid UTF-8 decodes to
			// U+FFFD), so a lone surrogate escape matches nothing.
			e.b.WriteString(`[^\x00-\x{10ffff}]`)
			break
		}
		writeRune(&e.b, n.r, false)
	case dot:
		if f&flagDotAll != 0 {
			e.b.WriteString(`[\x00-\x{10ffff}]`)
		} else {
			e.b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		}
	case class:
		return e.class(n)
	case assertion:
		return e.assertion(n, f)
	case group:
		return e.group(n, f)
	case lookaround:
		return unsupportedf("%s needs backtracking", lookaroundName(n))
	case backref:
		if n.name != "" {
			return unsupportedf("back-reference \\k<%s> needs backtracking", n.name)
		}
		return unsupportedf("back-reference \\%d needs backtracking", n.num)
	case repeat:
		return e.repeat(n, f)
	}
	return nil
}

func lookaroundName(l lookaround) string {
	switch {
	case l.behind && l.negate:
		return "negative look-behind (?<!…)"
	case l.behind:
		return "look-behind (?<=…)"
	case l.negate:
		return "negative look-ahead (?!…)"
	}
	return "look-ahead (?=…)"
}

// assertion writes ^, $, \b or \B. Without the m modifier ECMA-262's ^ and
// $ only match at the ends of the input (RE2's \A and \z; note that $ never
// matches before a trailing newline). With m they also match at \r, U+2028
// and U+2029, which RE2's multi-line mode does not know.
func (e *emitter) assertion(a assertion, f flags) error {
	switch a.kind {
	case '^', '$':
		if f&flagMultiline != 0 {
			return unsupportedf("%c under the m modifier (RE2 only knows \\n as a line end)", a.kind)
		}
		if a.kind == '^' {
			e.b.WriteString(`\A`)
		} else {
			e.b.WriteString(`\z`)
		}
	default:
		// ECMA-262's \b uses the ASCII \w, as RE2's does.
		e.b.WriteByte('\\')
		e.b.WriteRune(a.kind)
	}
	return nil
}

// group writes a capturing, non-capturing or modifier group.
func (e *emitter) group(g group, f flags) error {
	inner := (f | g.add) &^ g.remove
	switch {
	case g.capture && g.name != "" && re2Name(g.name) && !e.names[g.name]:
		if e.names == nil {
			e.names = map[string]bool{}
		}
		e.names[g.name] = true
		e.b.WriteString("(?P<" + g.name + ">")
	case g.capture:
		e.b.WriteByte('(')
	case (inner^f)&flagIgnoreCase != 0 && inner&flagIgnoreCase != 0:
		e.b.WriteString("(?i:")
	case (inner^f)&flagIgnoreCase != 0:
		e.b.WriteString("(?-i:")
	default:
		e.b.WriteString("(?:")
	}
	if err := e.emit(g.sub, inner); err != nil {
		return err
	}
	e.b.WriteByte(')')
	return nil
}

// re2Name reports whether RE2 accepts name for a capture group.
func re2Name(name string) bool {
	for _, c := range name {
		if c != '_' && (c > unicode.MaxASCII || !unicode.IsLetter(c) && !unicode.IsDigit(c)) {
			return false
		}
	}
	return name != ""
}

// repeat writes a quantified atom.
func (e *emitter) repeat(r repeat, f flags) error {
	if r.min > maxRepeat || r.max > maxRepeat {
		return unsupportedf("repetition count above %d (RE2's limit)", maxRepeat)
	}
	switch r.sub.(type) {
	case literal, dot, class, group:
		if err := e.emit(r.sub, f); err != nil {
			return err
		}
	default:
		e.b.WriteString("(?:")
		if err := e.emit(r.sub, f); err != nil {
			return err
		}
		e.b.WriteByte(')')
	}
	switch {
	case r.min == 0 && r.max < 0:
		e.b.WriteByte('*')
	case r.min == 1 && r.max < 0:
		e.b.WriteByte('+')
	case r.min == 0 && r.max == 1:
		e.b.WriteByte('?')
	case r.max < 0:
		e.b.WriteString("{" + strconv.Itoa(r.min) + ",}")
	case r.min == r.max:
		e.b.WriteString("{" + strconv.Itoa(r.min) + "}")
	default:
		e.b.WriteString("{" + strconv.Itoa(r.min) + "," + strconv.Itoa(r.max) + "}")
	}
	if r.lazy {
		e.b.WriteByte('?')
	}
	return nil
}

// class writes a character class. ECMA-262's empty class [] matches nothing
// and [^] matches any character; RE2 has no empty class, so both are spelled
// with the full range.
func (e *emitter) class(c class) error {
	var body strings.Builder
	for _, it := range c.items {
		switch {
		case !it.isSet:
			writeRange(&body, it.lo, it.hi)
		case it.set.err != nil:
			return it.set.err
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
	case body.Len() == 0 && c.negate:
		e.b.WriteString(`[\x00-\x{10ffff}]`)
	case body.Len() == 0:
		e.b.WriteString(`[^\x00-\x{10ffff}]`)
	case c.negate:
		e.b.WriteString("[^" + body.String() + "]")
	default:
		e.b.WriteString("[" + body.String() + "]")
	}
	return nil
}

// writeRange writes a class range, leaving out the surrogates, which no Go
// string holds and which RE2 would read as U+FFFD.
func writeRange(b *strings.Builder, lo, hi rune) {
	switch {
	case lo >= surrogateMin && hi <= surrogateMax:
		return
	case lo < surrogateMin && hi >= surrogateMin:
		writeRange(b, lo, surrogateMin-1)
		if hi > surrogateMax {
			writeRange(b, surrogateMax+1, hi)
		}
		return
	case lo >= surrogateMin && lo <= surrogateMax:
		lo = surrogateMax + 1
	}
	writeRune(b, lo, true)
	if hi != lo {
		b.WriteByte('-')
		writeRune(b, hi, true)
	}
}

const surrogateMin, surrogateMax = 0xd800, 0xdfff

func isSurrogate(r rune) bool { return r >= surrogateMin && r <= surrogateMax }

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
