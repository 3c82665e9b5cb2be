package ecmaregex

import (
	"fmt"
	"strings"
	"unicode"
)

// maxDepth bounds group nesting, so a hostile pattern cannot exhaust the
// stack; RE2 refuses deeper nesting anyway.
const maxDepth = 1000

// flags are the regular expression modifiers a group can switch.
type flags uint8

const (
	flagIgnoreCase flags = 1 << iota // i
	flagMultiline                    // m
	flagDotAll                       // s
)

// parser reads an ECMA-262 pattern with the u flag (the grammar of
// ECMA-262 §22.2.1 with [+UnicodeMode]) and writes its RE2 form to out as
// it goes. Offsets in errors count code points from 0.
type parser struct {
	src []rune
	pos int
	out strings.Builder

	// unsupported is the first construct RE2 cannot run. Parsing goes on
	// past it, so that a syntax error later in the pattern still wins.
	unsupported error

	flags    flags         // modifiers in force where the parser stands
	ncap     int           // capturing groups seen so far
	names    []namedGroup  // named groups, in order
	maxRef   int           // the highest \N, checked once all groups are known
	nameRefs []string      // the names of \k<name>, likewise
	path     []altPosition // where the parser stands among nested disjunctions, outermost first
	disjunct int           // disjunctions opened so far, to number them
}

// namedGroup records where a named group stands, to apply ECMA-262's rule on
// duplicate names: they may repeat only in different alternatives.
type namedGroup struct {
	name string
	path []altPosition
}

// altPosition is "alternative alt of disjunction id".
type altPosition struct{ id, alt int }

// unsupportedf records that RE2 cannot run the pattern, unless an earlier
// construct already did.
func (p *parser) unsupportedf(format string, args ...any) {
	if p.unsupported == nil {
		p.unsupported = unsupportedf(format, args...)
	}
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

// peek returns the code point at pos+ahead, or -1 past the end.
func (p *parser) peek(ahead int) rune {
	if p.pos+ahead >= len(p.src) {
		return -1
	}
	return p.src[p.pos+ahead]
}

// lookaroundOpener returns the length of the (?=, (?!, (?<= or (?<! at
// pos, or 0.
func (p *parser) lookaroundOpener() int {
	n := 2
	if p.peek(2) == '<' {
		n = 3
	}
	if p.peek(0) != '(' || p.peek(1) != '?' || p.peek(n) != '=' && p.peek(n) != '!' {
		return 0
	}
	return n + 1
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrSyntax, fmt.Sprintf(format, args...), p.pos)
}

// disjunction parses Alternative ( | Alternative )*.
func (p *parser) disjunction() error {
	if len(p.path) == maxDepth {
		return tooLargef("groups nested more than %d deep", maxDepth)
	}
	p.disjunct++
	p.path = append(p.path, altPosition{id: p.disjunct})
	defer func() { p.path = p.path[:len(p.path)-1] }()

	for {
		if err := p.alternative(); err != nil {
			return err
		}
		if p.peek(0) != '|' {
			return nil
		}
		p.pos++
		p.out.WriteByte('|')
		p.path[len(p.path)-1].alt++
	}
}

// alternative parses Term* up to a | or ) or the end.
func (p *parser) alternative() error {
	for !p.eof() && p.peek(0) != '|' && p.peek(0) != ')' {
		if err := p.term(); err != nil {
			return err
		}
	}
	return nil
}

// term parses an assertion, or an atom with an optional quantifier.
func (p *parser) term() error {
	var err error
	switch c := p.peek(0); {
	case c == '^' || c == '$':
		p.pos++
		p.anchor(c)
		return p.noQuantifier()
	case c == '\\' && (p.peek(1) == 'b' || p.peek(1) == 'B'):
		// ECMA-262's \b uses the ASCII \w, as RE2's does.
		p.out.WriteString(string(p.src[p.pos : p.pos+2]))
		p.pos += 2
		return p.noQuantifier()
	case p.lookaroundOpener() > 0:
		// With the u flag a look-around cannot be quantified.
		if err := p.lookaround(); err != nil {
			return err
		}
		return p.noQuantifier()
	case c == '(':
		err = p.group()
	case c == '.':
		p.pos++
		if p.flags&flagDotAll != 0 {
			p.out.WriteString(`[\x00-\x{10ffff}]`)
		} else {
			p.out.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		}
	case c == '[':
		err = p.class()
	case c == '\\':
		err = p.atomEscape()
	case c == '*' || c == '+' || c == '?' || c == '{':
		return p.noQuantifier()
	case c == '}' || c == ']':
		return p.errorf("lone %c", c)
	default:
		p.pos++
		writeLiteral(&p.out, c)
	}
	if err != nil {
		return err
	}
	return p.quantifier()
}

// anchor writes ^ or $. Without the m modifier ECMA-262's ^ and $ only
// match at the ends of the input (RE2's \A and \z; note that $ never
// matches before a trailing newline). With m they also match at \r, U+2028
// and U+2029, which RE2's multi-line mode does not know.
func (p *parser) anchor(c rune) {
	switch {
	case p.flags&flagMultiline != 0:
		p.unsupportedf("%c under the m modifier (RE2 only knows \\n as a line end)", c)
	case c == '^':
		p.out.WriteString(`\A`)
	default:
		p.out.WriteString(`\z`)
	}
}

// noQuantifier fails when a quantifier stands where none can: after an
// assertion (with the u flag), after another quantifier, or first.
func (p *parser) noQuantifier() error {
	switch c := p.peek(0); {
	case c == '*' || c == '+' || c == '?':
		return p.errorf("nothing to repeat")
	case c == '{':
		if _, _, ok := p.scanBraces(); ok {
			return p.errorf("nothing to repeat")
		}
		return p.errorf("lone quantifier brackets")
	}
	return nil
}

// quantifier parses an optional quantifier after the atom just written, and
// writes it. Every atom is written as one RE2 atom, so the quantifier
// applies to all of it.
func (p *parser) quantifier() error {
	switch c := p.peek(0); c {
	case '*', '+', '?':
		p.pos++
		p.out.WriteRune(c)
	case '{':
		lo, hi, ok := p.scanBraces()
		if !ok {
			return p.errorf("incomplete quantifier")
		}
		if hi >= 0 && hi < lo {
			return p.errorf("numbers out of order in {} quantifier")
		}
		if lo > maxRepeat || hi > maxRepeat {
			if p.unsupported == nil {
				p.unsupported = tooLargef("repetition count above %d (RE2's limit)", maxRepeat)
			}
		}
		switch {
		case hi < 0:
			fmt.Fprintf(&p.out, "{%d,}", lo)
		case hi == lo:
			fmt.Fprintf(&p.out, "{%d}", lo)
		default:
			fmt.Fprintf(&p.out, "{%d,%d}", lo, hi)
		}
	default:
		return nil
	}
	if p.peek(0) == '?' {
		p.pos++
		p.out.WriteByte('?')
	}
	return p.noQuantifier()
}

// scanBraces reads {n}, {n,} or {n,m} at pos, advancing past it when ok.
// hi is -1 for {n,}.
func (p *parser) scanBraces() (lo, hi int, ok bool) {
	start := p.pos
	p.pos++
	lo, ok = p.decimal()
	hi = lo
	if ok && p.peek(0) == ',' {
		p.pos++
		hi = -1 // {n,}
		if n, more := p.decimal(); more {
			hi = n
		}
	}
	if !ok || p.peek(0) != '}' {
		p.pos = start
		return 0, 0, false
	}
	p.pos++
	return lo, hi, true
}

// decimal reads the decimal digits at pos, if any, saturating far above
// RE2's limit.
func (p *parser) decimal() (int, bool) {
	start, v := p.pos, 0
	for c := p.peek(0); c >= '0' && c <= '9'; c = p.peek(0) {
		v = min(v*10+int(c-'0'), 1<<30)
		p.pos++
	}
	return v, p.pos > start
}

// lookaround parses (?=…), (?!…), (?<=…) and (?<!…), which RE2 cannot run.
func (p *parser) lookaround() error {
	open := p.lookaroundOpener()
	p.unsupportedf("look-around %s…) needs backtracking", string(p.src[p.pos:p.pos+open]))
	p.pos += open
	return p.groupBody()
}

// groupBody parses the disjunction of a group and its closing ), and
// writes the ).
func (p *parser) groupBody() error {
	if err := p.disjunction(); err != nil {
		return err
	}
	if p.peek(0) != ')' {
		return p.errorf("missing )")
	}
	p.pos++
	p.out.WriteByte(')')
	return nil
}

// group parses (…), (?:…), (?<name>…) and modifier groups (?ims-ims:…).
func (p *parser) group() error {
	p.pos++ // (
	outer := p.flags
	defer func() { p.flags = outer }()
	switch {
	case p.peek(0) != '?':
		p.ncap++
		p.out.WriteByte('(')
	case p.peek(1) == '<':
		p.pos += 2
		name, err := p.groupName()
		if err != nil {
			return err
		}
		p.ncap++
		p.names = append(p.names, namedGroup{name: name, path: append([]altPosition(nil), p.path...)})
		p.out.WriteByte('(') // nothing reads RE2's group names
	default:
		p.pos++ // ?
		add, remove, err := p.modifiers()
		if err != nil {
			return err
		}
		p.flags = (outer | add) &^ remove
		switch changed := p.flags ^ outer; {
		case changed&flagIgnoreCase != 0 && p.flags&flagIgnoreCase != 0:
			p.out.WriteString("(?i:")
		case changed&flagIgnoreCase != 0:
			p.out.WriteString("(?-i:")
		default:
			p.out.WriteString("(?:")
		}
	}
	return p.groupBody()
}

// modifiers parses the part of (?ims-ims: between ? and :, which is empty
// for a plain non-capturing group.
func (p *parser) modifiers() (add, remove flags, err error) {
	on := &add
	for ; ; p.pos++ {
		c := p.peek(0)
		i := strings.IndexRune("ims", c) // the order of the flag bits
		switch {
		case i >= 0 && (add|remove)&(1<<i) != 0:
			return 0, 0, p.errorf("repeated flag in modifier group")
		case i >= 0:
			*on |= 1 << i
		case c == '-' && on == &add:
			on = &remove
		case c == ':' && on == &remove && (add|remove) == 0:
			return 0, 0, p.errorf("empty modifier group")
		case c == ':':
			p.pos++
			return add, remove, nil
		default:
			return 0, 0, p.errorf("invalid group")
		}
	}
}

// groupName parses RegExpIdentifierName > after (?< or \k<.
func (p *parser) groupName() (string, error) {
	var b strings.Builder
	for first := true; ; first = false {
		if p.peek(0) == '>' && !first {
			p.pos++
			return b.String(), nil
		}
		if p.eof() {
			return "", p.errorf("invalid capture group name")
		}
		c := p.peek(0)
		p.pos++
		if c == '\\' {
			if p.peek(0) != 'u' {
				return "", p.errorf("invalid capture group name")
			}
			p.pos++
			var err error
			if c, err = p.unicodeEscape(); err != nil {
				return "", err
			}
		}
		if !identifierChar(c, first) {
			return "", p.errorf("invalid capture group name")
		}
		b.WriteRune(c)
	}
}

// identifierChar reports whether c may start (first) or continue an
// IdentifierName.
func identifierChar(c rune, first bool) bool {
	id := idContinue
	if first {
		id = idStart
	}
	return c == '$' || c == '_' || !first && (c == 0x200c || c == 0x200d) || // ZWNJ, ZWJ
		unicode.In(c, id...) && !unicode.In(c, patternChars...)
}

// atomEscape parses \… outside a class.
func (p *parser) atomEscape() error {
	p.pos++ // \
	switch c := p.peek(0); {
	case c >= '1' && c <= '9':
		n, _ := p.decimal()
		p.maxRef = max(p.maxRef, n)
		p.unsupportedf("back-reference \\%d needs backtracking", n)
		return nil
	case c == 'k':
		p.pos++
		if p.peek(0) != '<' {
			return p.errorf("invalid named reference")
		}
		p.pos++
		name, err := p.groupName()
		if err != nil {
			return err
		}
		p.nameRefs = append(p.nameRefs, name)
		p.unsupportedf("back-reference \\k<%s> needs backtracking", name)
		return nil
	}
	item, err := p.classEscape(false)
	if err != nil {
		return err
	}
	if item.isSet {
		writeClass(&p.out, false, []classItem{item})
	} else {
		writeLiteral(&p.out, item.lo)
	}
	return nil
}

// checkNames applies the rules that need the whole pattern: references must
// name existing groups, and duplicate names must sit in different
// alternatives.
func (p *parser) checkNames() error {
	byName := map[string][][]altPosition{}
	for _, g := range p.names {
		for _, other := range byName[g.name] {
			if mightBothParticipate(other, g.path) {
				return fmt.Errorf("%w: duplicate capture group name %q", ErrSyntax, g.name)
			}
		}
		byName[g.name] = append(byName[g.name], g.path)
	}
	if p.maxRef > p.ncap {
		return fmt.Errorf("%w: back-reference \\%d to a group that does not exist", ErrSyntax, p.maxRef)
	}
	for _, name := range p.nameRefs {
		if _, ok := byName[name]; !ok {
			return fmt.Errorf("%w: back-reference \\k<%s> to a group that does not exist", ErrSyntax, name)
		}
	}
	return nil
}

// mightBothParticipate reports whether two groups can both take part in one
// match: unless they sit in different alternatives of one disjunction.
func mightBothParticipate(a, b []altPosition) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i].id != b[i].id
		}
	}
	return true
}
