package schema

import (
	"regexp"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
)

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
	itemsKw                  kwID
	itemsFalse               bool // items after prefix are forbidden (one check per array)
	contains                 *node
	unevalItems              *node
	unevalItemsFalse         bool

	// objects
	minProps, maxProps int // -1 when absent
	required           []string
	reqProps           int // how many entries of props required names, or -1 unless props names them all
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
	dyn     map[string]*node      // $dynamicAnchor name -> schema, filled after compilation
	dynLocs map[string]*schemaLoc // compile time only
}

type enumSet struct {
	vals   []any      // every member, for messages
	strs   []string   // string members
	nums   []number   // number members
	others []any      // null, booleans, arrays, objects
	index  *enumIndex // by hash, for enums of enumIndexMin members or more
}

// numKw is a number keyword: its exact value, and its literal for
// messages.
type numKw struct {
	n   number
	lit string
}

type pattern struct {
	src  string
	re   *regexp.Regexp
	prog ecmaregex.Program // measured, until re is compiled
	size int               // the program's size in units (matchSteps)
}

func (p *pattern) match(s string) bool { return p.re.MatchString(s) }

type propEntry struct {
	name     string
	required bool // required names it
	seg      int  // plainKey when name needs no RFC 6901 escaping, else -1 (the frame's idx)
	n        *node
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
	if n.property(key) != nil {
		return true
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
