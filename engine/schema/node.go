package schema

import "regexp"

// node is one compiled schema. Every field is set by the compiler and only
// read afterwards, so a compiled tree is safe to share between goroutines.
type node struct {
	loc     string // RFC 6901 pointer of the schema in its document (prefixed by the URI outside the main document)
	id      int32  // index in the compiled Schema's nodes
	res     *resource
	boolean int8 // 0 object schema, 1 true, -1 false

	// what the object schema contains, to skip whole sections quickly
	anyNum, anyStr, anyArr, anyObj, inPlace bool
	leaf                                    bool // only assertions on the value itself: no applicators
	pureRef                                 bool // only $ref: evaluation goes straight to the target
	// plainObject: on an object, only type and the object keywords apply
	// (no references, in-place applicators, enum, const or unevaluated*),
	// so evaluating one is plainObject's work (an item of a list of records)
	plainObject bool

	// assertions on every type
	types    uint8 // 0 when absent
	enum     *enumSet
	hasConst bool
	constVal any

	// numbers
	multipleOf, minimum, maximum, exclMin, exclMax *numKw
	// numInt: an integer literal meets the type, the bounds are integers
	// and the enum (if any) is small (no const or multipleOf), so comparing
	// it as an int64 decides every check. numSign: besides, there is no
	// enum, the type admits every number and the bounds are 0, so any
	// literal's sign decides them.
	numInt, numSign bool
	numBounds       int8 // how many of minimum, maximum, exclMin and exclMax are set

	// strings
	minLength, maxLength int // -1 when absent
	pattern              *pattern
	format               string
	formatAssert         bool

	// arrays
	minItems, maxItems       int // -1 when absent
	uniqueItems              bool
	minContains, maxContains int // -1 when absent
	prefix                   []*node
	items                    *node // items after prefix (2020-12 items, draft-07 object items or additionalItems)
	itemsKw                  kwID
	itemsFalse               bool // items after prefix are forbidden (one check per array)
	contains                 *node
	unevalItems              *node
	unevalItemsFalse         bool

	// objects
	minProps, maxProps int // -1 when absent
	required           []string
	reqMask            uint32 // bits of the required names in props
	reqInProps         bool   // every required name is in props (and props is small)
	hasRequired        bool
	depRequired        []depRequired
	depRequiredKw      kwID // dependentRequired, or dependencies (draft-07 array form)
	props              []propEntry
	propMap            map[string]*node // for larger properties
	patProps           []patEntry
	addl               *node
	addlFalse          bool // one check per object
	propNames          *node
	unevalProps        *node
	unevalPropsFalse   bool

	// keyword locations of the assertions, for failure reports
	kwLocs []kwLoc

	// in-place applicators
	ref        *node
	dynRef     *node
	dynName    string // non-empty when the $dynamicRef target is looked up in the dynamic scope
	allOf      []*node
	anyOf      []*node
	oneOf      []*node
	not        *node
	ifN        *node
	thenN      *node
	elseN      *node
	depSchemas []depSchema
	depSchKw   string
}

// resource is a schema resource ($id scope) for $dynamicRef lookups.
type resource struct {
	uri     string
	dyn     map[string]*node      // $dynamicAnchor name -> schema, filled after compilation
	dynLocs map[string]*schemaLoc // compile time only
}

type enumSet struct {
	vals    []any      // every member, for messages
	strs    []string   // string members
	nums    []number   // number members
	numLits []string   // number members as written, for a quick first test
	ints    []int64    // the integer members within int64: all an integer literal can equal
	others  []any      // null, booleans, arrays, objects
	index   *enumIndex // by hash, for enums of enumIndexMin members or more
}

type numKw struct {
	n    number
	lit  string
	zero bool  // the keyword is 0: a sign test decides a comparison
	i64  int64 // the keyword as an integer, when isI
	isI  bool
}

// litSign is the sign of a valid JSON number literal.
func litSign(lit string) int {
	sign := 1
	if len(lit) > 0 && lit[0] == '-' {
		sign = -1
	}
	for i := 0; i < len(lit); i++ {
		switch c := lit[i]; {
		case c >= '1' && c <= '9':
			return sign
		case c == 'e' || c == 'E':
			return 0
		}
	}
	return 0
}

// litSmall parses a JSON integer literal of one or two digits, as most
// counts and positions are written; it is small enough to be inlined.
func litSmall(lit string) (int64, bool) {
	switch {
	case len(lit) == 1 && lit[0]-'0' < 10:
		return int64(lit[0] - '0'), true
	case len(lit) == 2 && lit[0]-'1' < 9 && lit[1]-'0' < 10:
		return int64(lit[0]-'0')*10 + int64(lit[1]-'0'), true
	}
	return 0, false
}

// litInt parses a JSON integer literal of at most 18 digits.
func litInt(lit string) (int64, bool) {
	if v, ok := litSmall(lit); ok {
		return v, true
	}
	i, neg := 0, false
	if len(lit) > 0 && lit[0] == '-' {
		i, neg = 1, true
	}
	if i >= len(lit) || len(lit)-i > 18 || (lit[i] == '0' && len(lit) > i+1) {
		return 0, false
	}
	var v int64
	for ; i < len(lit); i++ {
		c := lit[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

type pattern struct {
	src  string
	re   *regexp.Regexp
	fast *fastMatcher // nil when the pattern is not in the fast subset
}

func (p *pattern) match(s string) bool {
	if p.fast != nil {
		return p.fast.match(s)
	}
	return p.re.MatchString(s)
}

type propEntry struct {
	name string
	seg  int // plainKey when name needs no RFC 6901 escaping, else -1 (the frame's idx)
	n    *node
}

type patEntry struct {
	p *pattern
	n *node
}

type depRequired struct {
	prop     string
	required []string
}

type depSchema struct {
	prop string
	n    *node
}

// declares reports whether n's properties or patternProperties name key.
func (n *node) declares(key string) bool {
	if n.propMap != nil {
		if _, ok := n.propMap[key]; ok {
			return true
		}
	} else {
		for i := range n.props {
			if n.props[i].name == key {
				return true
			}
		}
	}
	for i := range n.patProps {
		if n.patProps[i].p.match(key) {
			return true
		}
	}
	return false
}

// property returns the properties subschema for key.
func (n *node) property(key string) *node {
	if n.propMap != nil {
		return n.propMap[key]
	}
	for i := range n.props {
		if n.props[i].name == key {
			return n.props[i].n
		}
	}
	return nil
}

// kwID names a keyword a failure reports: a byte that failure records
// compare and switch on cheaply, and that holds no pointer.
type kwID uint8

const (
	kwSelf  kwID = iota // the schema itself (a failure's location keyword only)
	kwFalse             // a false schema (a failure's reported keyword only)
	kwType
	kwEnum
	kwConst
	kwMultipleOf
	kwMinimum
	kwMaximum
	kwExclusiveMinimum
	kwExclusiveMaximum
	kwMinLength
	kwMaxLength
	kwPattern
	kwFormat
	kwMinItems
	kwMaxItems
	kwUniqueItems
	kwContains
	kwMinContains
	kwMaxContains
	kwMinProperties
	kwMaxProperties
	kwRequired
	kwDependentRequired
	kwDependencies
	kwPropertyNames
	kwAnyOf
	kwOneOf
	kwNot
	kwAdditionalProperties
	kwUnevaluatedProperties
	kwUnevaluatedItems
	kwItems
	kwAdditionalItems

	kwLast = kwAdditionalItems
)

var kwNames = [...]string{
	kwSelf:                  "",
	kwFalse:                 "false",
	kwType:                  "type",
	kwEnum:                  "enum",
	kwConst:                 "const",
	kwMultipleOf:            "multipleOf",
	kwMinimum:               "minimum",
	kwMaximum:               "maximum",
	kwExclusiveMinimum:      "exclusiveMinimum",
	kwExclusiveMaximum:      "exclusiveMaximum",
	kwMinLength:             "minLength",
	kwMaxLength:             "maxLength",
	kwPattern:               "pattern",
	kwFormat:                "format",
	kwMinItems:              "minItems",
	kwMaxItems:              "maxItems",
	kwUniqueItems:           "uniqueItems",
	kwContains:              "contains",
	kwMinContains:           "minContains",
	kwMaxContains:           "maxContains",
	kwMinProperties:         "minProperties",
	kwMaxProperties:         "maxProperties",
	kwRequired:              "required",
	kwDependentRequired:     "dependentRequired",
	kwDependencies:          "dependencies",
	kwPropertyNames:         "propertyNames",
	kwAnyOf:                 "anyOf",
	kwOneOf:                 "oneOf",
	kwNot:                   "not",
	kwAdditionalProperties:  "additionalProperties",
	kwUnevaluatedProperties: "unevaluatedProperties",
	kwUnevaluatedItems:      "unevaluatedItems",
	kwItems:                 "items",
	kwAdditionalItems:       "additionalItems",
}

// String is the keyword's name ("" for kwSelf).
func (k kwID) String() string { return kwNames[k] }

// kwLoc is the precomputed location of one keyword in a node.
type kwLoc struct {
	kw  kwID
	loc string
}
