package ecmaregex

// node is one element of a parsed pattern.
type node interface{ isNode() }

// alternation is a Disjunction: a|b|c.
type alternation struct{ alts []node }

// concat is an Alternative: terms matched one after the other.
type concat struct{ terms []node }

// literal matches one code point.
type literal struct{ r rune }

// dot is the . atom.
type dot struct{}

// classItem is one member of a character class: a range of code points, or
// a class escape (set is used when isSet).
type classItem struct {
	lo, hi rune
	isSet  bool
	set    charSet
}

// class is a bracketed character class or a class escape used as an atom.
type class struct {
	negate bool
	items  []classItem
}

// assertion is ^, $, \b or \B (kind holds the character after any \).
type assertion struct{ kind rune }

// group is a capturing group (capture), a named capturing group (name set),
// a non-capturing group, or a modifier group such as (?i:…).
type group struct {
	capture bool
	name    string
	add     flags // modifiers switched on, e.g. i in (?i:…)
	remove  flags // modifiers switched off, e.g. i in (?-i:…)
	sub     node
}

// lookaround is (?=…), (?!…), (?<=…) or (?<!…).
type lookaround struct {
	behind, negate bool
	sub            node
}

// backref is \N or \k<name>.
type backref struct {
	num  int
	name string
}

// repeat is an atom with a quantifier; max < 0 means no upper bound.
type repeat struct {
	min, max int
	lazy     bool
	sub      node
}

func (alternation) isNode() {}
func (concat) isNode()      {}
func (literal) isNode()     {}
func (dot) isNode()         {}
func (class) isNode()       {}
func (assertion) isNode()   {}
func (group) isNode()       {}
func (lookaround) isNode()  {}
func (backref) isNode()     {}
func (repeat) isNode()      {}

// flags are the regular expression modifiers a group can switch.
type flags uint8

const (
	flagIgnoreCase flags = 1 << iota // i
	flagMultiline                    // m
	flagDotAll                       // s
)
