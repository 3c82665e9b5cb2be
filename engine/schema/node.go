package schema

import "regexp"

// node is one compiled schema. Every field is set by the compiler and only
// read afterwards, so a compiled tree is safe to share between goroutines.
type node struct {
	loc     string // RFC 6901 pointer of the schema in its document (prefixed by the URI outside the main document)
	res     *resource
	boolean int8 // 0 object schema, 1 true, -1 false

	// what the object schema contains, to skip whole sections quickly
	anyNum, anyStr, anyArr, anyObj, inPlace bool
	leaf                                    bool // only assertions on the value itself: no applicators
	pureRef                                 bool // only $ref: evaluation goes straight to the target

	// assertions on every type
	types    uint8 // 0 when absent
	enum     *enumSet
	hasConst bool
	constVal any

	// numbers
	multipleOf, minimum, maximum, exclMin, exclMax *numKw

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
	itemsKw                  string
	itemsFalse               bool // items after prefix are forbidden (one check per array)
	contains                 *node
	unevalItems              *node
	unevalItemsFalse         bool

	// objects
	minProps, maxProps int // -1 when absent
	required           []string
	reqIdx             []int // index of each required name in props, or -1
	hasRequired        bool
	depRequired        []depRequired
	depRequiredKw      string // dependentRequired, or dependencies (draft-07 array form)
	props              []propEntry
	propMap            map[string]*node // for larger properties
	patProps           []patEntry
	addl               *node
	addlFalse          bool // one check per object
	propNames          *node
	unevalProps        *node
	unevalPropsFalse   bool

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
	vals   []any    // every member, for messages
	strs   []string // string members
	nums   []number // number members
	others []any    // null, booleans, arrays, objects
}

type numKw struct {
	n   number
	lit string
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
