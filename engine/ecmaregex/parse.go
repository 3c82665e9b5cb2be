package ecmaregex

import (
	"fmt"
	"strings"
	"unicode"
)

// maxDepth bounds group nesting, so a hostile pattern cannot exhaust the
// stack; RE2 refuses deeper nesting anyway.
const maxDepth = 1000

// parser reads an ECMA-262 pattern with the u flag (the grammar of
// ECMA-262 §22.2.1 with [+UnicodeMode]) into a tree. Offsets in errors count
// code points from 0.
type parser struct {
	src   []rune
	pos   int
	depth int

	flags    flags         // modifiers in force where the parser stands
	ncap     int           // capturing groups seen so far
	names    []namedGroup  // named groups, in order
	refs     []backref     // back-references, checked once all groups are known
	path     []altPosition // where the parser stands among nested disjunctions
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

// parse parses p. A non-nil error wraps ErrSyntax, or ErrUnsupported when
// the pattern nests deeper than RE2 could run.
func parse(p string) (node, error) {
	ps := &parser{src: []rune(p)}
	n, err := ps.disjunction()
	if err != nil {
		return nil, err
	}
	if !ps.eof() {
		// disjunction only stops early at a ')' it did not open.
		return nil, ps.errorf("unmatched )")
	}
	if err := ps.checkNames(); err != nil {
		return nil, err
	}
	return n, nil
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

// peek returns the code point at pos+ahead, or -1 past the end.
func (p *parser) peek(ahead int) rune {
	if p.pos+ahead >= len(p.src) {
		return -1
	}
	return p.src[p.pos+ahead]
}

// lookingAt reports whether the source continues with s.
func (p *parser) lookingAt(s string) bool {
	i := p.pos
	for _, r := range s {
		if i >= len(p.src) || p.src[i] != r {
			return false
		}
		i++
	}
	return true
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrSyntax, fmt.Sprintf(format, args...), p.pos)
}

// disjunction parses Alternative ( | Alternative )*.
func (p *parser) disjunction() (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, unsupportedf("groups nested more than %d deep", maxDepth)
	}
	p.disjunct++
	p.path = append(p.path, altPosition{id: p.disjunct})
	defer func() { p.path = p.path[:len(p.path)-1] }()

	var alts []node
	for {
		a, err := p.alternative()
		if err != nil {
			return nil, err
		}
		alts = append(alts, a)
		if p.peek(0) != '|' {
			break
		}
		p.pos++
		p.path[len(p.path)-1].alt++
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return alternation{alts: alts}, nil
}

// alternative parses Term* up to a | or ) or the end.
func (p *parser) alternative() (node, error) {
	var terms []node
	for !p.eof() && p.peek(0) != '|' && p.peek(0) != ')' {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	return concat{terms: terms}, nil
}

// term parses an assertion, or an atom with an optional quantifier.
func (p *parser) term() (node, error) {
	var atom node
	var err error
	switch c := p.peek(0); {
	case c == '^' || c == '$':
		p.pos++
		return assertion{kind: c}, p.noQuantifier()
	case c == '\\' && (p.peek(1) == 'b' || p.peek(1) == 'B'):
		p.pos += 2
		return assertion{kind: p.src[p.pos-1]}, p.noQuantifier()
	case p.lookingAt("(?=") || p.lookingAt("(?!") || p.lookingAt("(?<=") || p.lookingAt("(?<!"):
		// With the u flag a look-around cannot be quantified.
		n, err := p.lookaround()
		if err != nil {
			return nil, err
		}
		return n, p.noQuantifier()
	case c == '(':
		atom, err = p.group()
	case c == '.':
		p.pos++
		atom = dot{}
	case c == '[':
		atom, err = p.class()
	case c == '\\':
		atom, err = p.atomEscape()
	case c == '*' || c == '+' || c == '?':
		return nil, p.errorf("nothing to repeat")
	case c == '{':
		if _, _, ok := p.scanBraces(); ok {
			return nil, p.errorf("nothing to repeat")
		}
		return nil, p.errorf("lone quantifier brackets")
	case c == '}' || c == ']':
		return nil, p.errorf("lone %c", c)
	default:
		p.pos++
		atom = literal{r: c}
	}
	if err != nil {
		return nil, err
	}
	return p.quantifier(atom)
}

// noQuantifier fails when a quantifier follows something that cannot take
// one (assertions with the u flag).
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

// quantifier parses an optional quantifier after atom.
func (p *parser) quantifier(atom node) (node, error) {
	r := repeat{sub: atom}
	switch p.peek(0) {
	case '*':
		r.min, r.max = 0, -1
		p.pos++
	case '+':
		r.min, r.max = 1, -1
		p.pos++
	case '?':
		r.min, r.max = 0, 1
		p.pos++
	case '{':
		lo, hi, ok := p.scanBraces()
		if !ok {
			return nil, p.errorf("incomplete quantifier")
		}
		if hi >= 0 && hi < lo {
			return nil, p.errorf("numbers out of order in {} quantifier")
		}
		r.min, r.max = lo, hi
	default:
		return atom, nil
	}
	if p.peek(0) == '?' {
		r.lazy = true
		p.pos++
	}
	if p.peek(0) == '*' || p.peek(0) == '+' || p.peek(0) == '?' || p.peek(0) == '{' {
		if p.peek(0) == '{' {
			if _, _, ok := p.scanBraces(); !ok {
				return nil, p.errorf("lone quantifier brackets")
			}
		}
		return nil, p.errorf("nothing to repeat")
	}
	return r, nil
}

// scanBraces reads {n}, {n,} or {n,m} at pos, advancing past it when ok.
// Counts saturate at a value far above RE2's limit. hi is -1 for {n,}.
func (p *parser) scanBraces() (lo, hi int, ok bool) {
	i := p.pos + 1
	digits := func() (int, bool) {
		start, v := i, 0
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			v = min(v*10+int(p.src[i]-'0'), 1<<30)
			i++
		}
		return v, i > start
	}
	lo, ok = digits()
	if !ok {
		return 0, 0, false
	}
	hi = lo
	if i < len(p.src) && p.src[i] == ',' {
		i++
		if hi, ok = digits(); !ok {
			hi = -1
		}
	}
	if i >= len(p.src) || p.src[i] != '}' {
		return 0, 0, false
	}
	p.pos = i + 1
	return lo, hi, true
}

// lookaround parses (?=…), (?!…), (?<=…) and (?<!…).
func (p *parser) lookaround() (node, error) {
	p.pos += 2
	l := lookaround{}
	if p.peek(0) == '<' {
		l.behind = true
		p.pos++
	}
	l.negate = p.peek(0) == '!'
	p.pos++
	sub, err := p.disjunction()
	if err != nil {
		return nil, err
	}
	if p.peek(0) != ')' {
		return nil, p.errorf("missing )")
	}
	p.pos++
	l.sub = sub
	return l, nil
}

// group parses (…), (?:…), (?<name>…) and modifier groups (?ims-ims:…).
func (p *parser) group() (node, error) {
	p.pos++ // (
	g := group{}
	switch {
	case p.peek(0) != '?':
		g.capture = true
		p.ncap++
	case p.peek(1) == '<':
		p.pos += 2
		name, err := p.groupName()
		if err != nil {
			return nil, err
		}
		g.capture, g.name = true, name
		p.ncap++
		p.names = append(p.names, namedGroup{name: name, path: append([]altPosition(nil), p.path...)})
	default:
		p.pos++ // ?
		if err := p.modifiers(&g); err != nil {
			return nil, err
		}
	}
	outer := p.flags
	p.flags = (outer | g.add) &^ g.remove
	sub, err := p.disjunction()
	p.flags = outer
	if err != nil {
		return nil, err
	}
	if p.peek(0) != ')' {
		return nil, p.errorf("missing )")
	}
	p.pos++
	g.sub = sub
	return g, nil
}

// modifiers parses the part of (?ims-ims: between ? and :, which is empty
// for a plain non-capturing group.
func (p *parser) modifiers(g *group) error {
	seen := flags(0)
	read := func() (flags, error) {
		var f flags
		for {
			var bit flags
			switch p.peek(0) {
			case 'i':
				bit = flagIgnoreCase
			case 'm':
				bit = flagMultiline
			case 's':
				bit = flagDotAll
			default:
				return f, nil
			}
			if seen&bit != 0 {
				return 0, p.errorf("repeated flag in modifier group")
			}
			seen |= bit
			f |= bit
			p.pos++
		}
	}
	var err error
	if g.add, err = read(); err != nil {
		return err
	}
	if p.peek(0) == '-' {
		p.pos++
		if g.remove, err = read(); err != nil {
			return err
		}
		if g.remove == 0 {
			return p.errorf("empty modifier group")
		}
	}
	if p.peek(0) != ':' {
		return p.errorf("invalid group")
	}
	p.pos++
	return nil
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
	if c == '$' || c == '_' {
		return true
	}
	if !first && (c == 0x200c || c == 0x200d) {
		return true
	}
	if unicode.In(c, unicode.Pattern_Syntax, unicode.Pattern_White_Space) {
		return false
	}
	if unicode.In(c, unicode.L, unicode.Nl, unicode.Other_ID_Start) {
		return true
	}
	return !first && unicode.In(c, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue)
}

// atomEscape parses \… outside a class.
func (p *parser) atomEscape() (node, error) {
	p.pos++ // \
	if p.eof() {
		return nil, p.errorf("\\ at end of pattern")
	}
	c := p.peek(0)
	switch {
	case c >= '1' && c <= '9':
		n := 0
		for p.peek(0) >= '0' && p.peek(0) <= '9' {
			n = min(n*10+int(p.peek(0)-'0'), 1<<30)
			p.pos++
		}
		ref := backref{num: n}
		p.refs = append(p.refs, ref)
		return ref, nil
	case c == 'k':
		p.pos++
		if p.peek(0) != '<' {
			return nil, p.errorf("invalid named reference")
		}
		p.pos++
		name, err := p.groupName()
		if err != nil {
			return nil, err
		}
		ref := backref{name: name}
		p.refs = append(p.refs, ref)
		return ref, nil
	}
	item, err := p.classEscape(false)
	if err != nil {
		return nil, err
	}
	if item.isSet {
		return class{items: []classItem{item}}, nil
	}
	return literal{r: item.lo}, nil
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
	for _, r := range p.refs {
		if r.name == "" && r.num > p.ncap {
			return fmt.Errorf("%w: back-reference \\%d to a group that does not exist", ErrSyntax, r.num)
		}
		if _, ok := byName[r.name]; r.name != "" && !ok {
			return fmt.Errorf("%w: back-reference \\k<%s> to a group that does not exist", ErrSyntax, r.name)
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
