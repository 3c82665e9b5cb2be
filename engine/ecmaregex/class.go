package ecmaregex

import (
	"cmp"
	"slices"
	"strconv"
	"unicode"
)

// classItem is one member of a character class: a range of code points, or
// a class escape (set is used when isSet).
type classItem struct {
	lo, hi rune
	isSet  bool
	set    charSet
}

// classEscape parses the escape after a \ (already consumed) that stands for
// one character or a set; inClass allows \b (backspace) and \-.
func (p *parser) classEscape(inClass bool) (classItem, error) {
	if p.eof() {
		return classItem{}, p.errorf("\\ at end of pattern")
	}
	c := p.peek(0)
	p.pos++
	single := func(r rune) (classItem, error) { return classItem{lo: r, hi: r}, nil }
	switch c {
	case 'd', 'D', 'w', 'W', 's', 'S':
		set := charSet{set: escapeSet(unicode.ToLower(c), p.flags&flagIgnoreCase != 0)}
		if unicode.IsUpper(c) {
			set = set.negate()
		}
		return classItem{isSet: true, set: set}, nil
	case 'p', 'P':
		set, err := p.property()
		if err != nil {
			return classItem{}, err
		}
		if c == 'P' {
			set = set.negate()
		}
		if set.neg && p.flags&flagIgnoreCase != 0 {
			// ECMA-262 complements \P{…} before case folding, RE2 after:
			// spell the complement out so RE2 folds the right set.
			table := cmp.Or(unicode.Categories[set.re2], unicode.Scripts[set.re2])
			set = charSet{set: tableSet(table).complement()}
		}
		return classItem{isSet: true, set: set}, nil
	case 'f', 'n', 'r', 't', 'v':
		return single(controlEscapes[c])
	case 'c':
		l := p.peek(0)
		if l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z' {
			p.pos++
			return single(l % 32)
		}
		p.pos--
		return classItem{}, p.errorf("invalid \\c escape")
	case '0':
		if d := p.peek(0); d >= '0' && d <= '9' {
			return classItem{}, p.errorf("invalid decimal escape")
		}
		return single(0)
	case 'x':
		v, ok := p.hex(p.pos, p.pos+2)
		if !ok {
			return classItem{}, p.errorf("invalid \\x escape")
		}
		p.pos += 2
		return single(v)
	case 'u':
		r, err := p.unicodeEscape()
		if err != nil {
			return classItem{}, err
		}
		return single(r)
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/':
		return single(c)
	case 'b':
		if inClass {
			return single('\b')
		}
	case '-':
		if inClass {
			return single('-')
		}
	}
	p.pos--
	return classItem{}, p.errorf("invalid escape \\%c", c)
}

// controlEscapes are the escapes of ECMA-262's ControlEscape.
var controlEscapes = map[rune]rune{'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// unicodeEscape parses what follows \u: XXXX (joining a surrogate pair
// written as two escapes) or {X…}.
func (p *parser) unicodeEscape() (rune, error) {
	if p.peek(0) == '{' {
		end := p.closingBrace()
		v, ok := p.hex(p.pos+1, end)
		if !ok {
			return 0, p.errorf("invalid unicode escape")
		}
		p.pos = end + 1
		return v, nil
	}
	v, ok := p.hex(p.pos, p.pos+4)
	if !ok {
		return 0, p.errorf("invalid unicode escape")
	}
	p.pos += 4
	if v >= 0xd800 && v <= 0xdbff && p.peek(0) == '\\' && p.peek(1) == 'u' {
		if lo, ok := p.hex(p.pos+2, p.pos+6); ok && lo >= 0xdc00 && lo <= 0xdfff {
			p.pos += 6
			return (v-0xd800)<<10 + (lo - 0xdc00) + 0x10000, nil
		}
	}
	return v, nil
}

// closingBrace returns the index of the first } after pos, or -1.
func (p *parser) closingBrace() int {
	if i := slices.Index(p.src[p.pos:], '}'); i >= 0 {
		return p.pos + i
	}
	return -1
}

// hex reads the hex digits from src[i] up to src[end]; false for no such
// digits, or an end outside src[i:].
func (p *parser) hex(i, end int) (rune, bool) {
	if end < i || end > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[i:end]), 16, 32)
	return rune(v), err == nil && v <= unicode.MaxRune
}

// property parses {…} after \p or \P.
func (p *parser) property() (charSet, error) {
	end := p.closingBrace()
	if p.peek(0) != '{' || end < 0 {
		return charSet{}, p.errorf("invalid property name")
	}
	set, err := p.lookupProperty(string(p.src[p.pos+1 : end]))
	p.pos = end + 1
	return set, err
}

// class parses [ … ] and writes it.
func (p *parser) class() error {
	p.pos++ // [
	negate := p.peek(0) == '^'
	if negate {
		p.pos++
	}
	var items []classItem
	for {
		if p.eof() {
			return p.errorf("missing ] for character class")
		}
		if p.peek(0) == ']' {
			p.pos++
			writeClass(&p.out, negate, items)
			return nil
		}
		a, err := p.classAtom()
		if err != nil {
			return err
		}
		if p.peek(0) != '-' || p.peek(1) == ']' || p.peek(1) == -1 {
			items = append(items, a)
			continue
		}
		p.pos++ // -
		b, err := p.classAtom()
		if err != nil {
			return err
		}
		if a.isSet || b.isSet {
			return p.errorf("invalid character class range")
		}
		if a.lo > b.lo {
			return p.errorf("range out of order in character class")
		}
		items = append(items, classItem{lo: a.lo, hi: b.lo})
	}
}

// classAtom parses one character or class escape inside [ ].
func (p *parser) classAtom() (classItem, error) {
	c := p.peek(0)
	p.pos++
	if c != '\\' {
		return classItem{lo: c, hi: c}, nil
	}
	return p.classEscape(true)
}

// escapeSet returns the set of \d, \w or \s (c lower-case) with the u flag:
// ASCII digits, ASCII word characters, and ECMA-262 white space plus line
// terminators. Under the i modifier \w also holds U+017F and U+212A, whose
// case folds are ASCII letters (ECMA-262's WordCharacters).
func escapeSet(c rune, ignoreCase bool) runeSet {
	switch c {
	case 'd':
		return setOf(runeRange{'0', '9'})
	case 'w':
		w := []runeRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
		if ignoreCase {
			w = append(w, runeRange{0x017f, 0x017f}, runeRange{0x212a, 0x212a})
		}
		return setOf(w...)
	}
	return setOf(append(tableSet(unicode.Zs), runeRange{'\t', '\r'}, runeRange{0x2028, 0x2029},
		runeRange{0xfeff, 0xfeff})...)
}
