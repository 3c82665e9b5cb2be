package schema

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
	"github.com/verifier-dev/verifier/engine/format"
)

// compile returns the node for loc, compiling it (and what it refers to) on
// first use.
func (c *compiler) compile(loc *schemaLoc) (*node, error) {
	if loc.node != nil {
		return loc.node, nil
	}
	ptr := loc.ptr
	if !loc.doc.main {
		ptr = loc.doc.uri + "#" + loc.ptr
	}
	n := &node{loc: ptr, res: loc.res, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1,
		minContains: -1, maxContains: -1, minProps: -1, maxProps: -1}
	loc.node = n
	n.id = int32(len(c.nodes))
	c.nodes = append(c.nodes, n)
	if len(c.nodes) > c.opts.MaxNodes {
		return nil, c.errAt(loc.doc, loc.ptr, fmt.Sprintf("the schema has more than %d subschemas", c.opts.MaxNodes), "split it into smaller schemas or raise the node limit")
	}
	switch v := loc.raw.(type) {
	case bool:
		n.boolean = -1
		if v {
			n.boolean = 1
		}
		return n, nil
	case map[string]any:
		k := kwCompiler{c: c, loc: loc, obj: v, n: n}
		if err := k.all(); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, c.errAt(loc.doc, loc.ptr, "a schema must be an object or a boolean, found "+typeName(typeOf(loc.raw)),
		"replace it with an object such as {} (anything goes), true or false")
}

// kwCompiler compiles the keywords of one object schema.
type kwCompiler struct {
	c   *compiler
	loc *schemaLoc
	obj map[string]any
	n   *node
}

func (k *kwCompiler) err(kw, problem, fix string) error {
	return k.c.errAt(k.loc.doc, k.loc.at(kw), problem, fix)
}

func (k *kwCompiler) typeErr(kw, want string) error {
	return k.err(kw, fmt.Sprintf("%s must be %s, found %s", kw, want, typeName(typeOf(k.obj[kw]))), fixFor(kw, want))
}

func fixFor(kw, want string) string {
	switch kw {
	case "type":
		return `use one of "array", "boolean", "integer", "null", "number", "object", "string", or an array of them`
	case "required":
		return `list the property names as strings, e.g. "required": ["id", "total"]`
	}
	return fmt.Sprintf("write %s as %s", kw, want)
}

func (k *kwCompiler) all() error {
	dia := k.loc.dia
	n := k.n
	if dia.draft == Draft7 {
		if _, ok := k.obj["$ref"]; ok { // draft-07: $ref overrides its siblings
			return k.ref("$ref")
		}
	} else {
		if err := k.ref("$ref"); err != nil {
			return err
		}
		if err := k.ref("$dynamicRef"); err != nil {
			return err
		}
	}
	if dia.validation {
		if err := k.validation(); err != nil {
			return err
		}
	}
	if err := k.format(); err != nil {
		return err
	}
	if dia.applicator {
		if err := k.applicators(); err != nil {
			return err
		}
	}
	if dia.unevaluated && dia.draft == Draft2020 {
		var err error
		if n.unevalProps, n.unevalPropsFalse, err = k.aggregate("unevaluatedProperties"); err != nil {
			return err
		}
		if n.unevalItems, n.unevalItemsFalse, err = k.aggregate("unevaluatedItems"); err != nil {
			return err
		}
	}
	for kw := kwType; kw <= kwLast; kw++ {
		if _, ok := k.obj[kw.String()]; ok {
			n.kwLocs = append(n.kwLocs, kwLoc{kw: kw, loc: n.loc + "/" + kw.String()})
		}
	}
	for _, r := range n.required {
		i := slices.IndexFunc(n.props, func(p propEntry) bool { return p.name == r })
		if i < 0 {
			n.reqProps = -1
			break
		}
		if !n.props[i].required {
			n.props[i].required = true
			n.reqProps++
		}
	}
	n.anyNum = n.multipleOf != nil || n.minimum != nil || n.maximum != nil || n.exclMin != nil || n.exclMax != nil
	n.anyStr = n.minLength >= 0 || n.maxLength >= 0 || n.pattern != nil || n.formatAssert
	n.anyArr = n.minItems >= 0 || n.maxItems >= 0 || n.uniqueItems || n.prefix != nil || n.items != nil ||
		n.itemsFalse || n.contains != nil || n.unevalItems != nil || n.unevalItemsFalse
	n.anyObj = n.minProps >= 0 || n.maxProps >= 0 || n.hasRequired || n.depRequired != nil || n.props != nil ||
		n.patProps != nil || n.addl != nil || n.addlFalse || n.propNames != nil || n.unevalProps != nil ||
		n.unevalPropsFalse
	n.inPlace = n.allOf != nil || n.anyOf != nil || n.oneOf != nil || n.not != nil || n.ifN != nil || n.depSchemas != nil
	value := n.types != 0 || n.enum != nil || n.hasConst || n.anyNum || n.anyStr
	n.leaf = n.ref == nil && n.dynRef == nil && !n.inPlace && !n.anyObj && !n.anyArr
	n.pureRef = n.ref != nil && n.dynRef == nil && !n.inPlace && !n.anyObj && !n.anyArr && !value
	return nil
}

// sub compiles the subschema at kw (and further tokens) of this schema.
func (k *kwCompiler) sub(tokens ...string) (*node, error) {
	ptr := k.loc.ptr
	for _, t := range tokens {
		ptr += "/" + escapeToken(t)
	}
	l, ok := k.c.locAt(k.loc.doc, ptr)
	if !ok {
		return nil, k.c.errAt(k.loc.doc, ptr, "subschema cannot be located", "check the keyword's value")
	}
	return k.c.compile(l)
}

func (k *kwCompiler) ref(kw string) error {
	v, ok := k.obj[kw]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return k.typeErr(kw, "a string (a URI reference such as \"#/$defs/item\")")
	}
	l, frag, err := k.c.resolveRef(k.loc, kw, s)
	if err != nil {
		return err
	}
	t, err := k.c.compile(l)
	if err != nil {
		return err
	}
	if kw == "$ref" {
		k.n.ref = t
		return nil
	}
	k.n.dynRef = t
	if obj, _ := l.raw.(map[string]any); frag != "" && obj["$dynamicAnchor"] == frag {
		k.n.dynName = frag
		k.c.needDyn = true
	}
	return nil
}

func (k *kwCompiler) number(kw string) (*numKw, error) {
	v, ok := k.obj[kw]
	if !ok {
		return nil, nil
	}
	if typeOf(v) != typeNumber {
		return nil, k.typeErr(kw, "a number")
	}
	nk := &numKw{}
	if !numberOf(v, &nk.n) {
		return nil, k.typeErr(kw, "a finite number")
	}
	nk.lit = nk.n.String()
	return nk, nil
}

// count reads a non-negative integer keyword; -1 when absent.
func (k *kwCompiler) count(kw string) (int, error) {
	v, ok := k.obj[kw]
	if !ok {
		return -1, nil
	}
	var n number
	if numberOf(v, &n) { // false for any other type
		if i, ok := n.toInt(); ok {
			return i, nil
		}
	}
	return 0, k.typeErr(kw, "a non-negative integer")
}

func (k *kwCompiler) strings(kw string, v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, k.typeErr(kw, "an array of strings")
	}
	out := make([]string, 0, len(a))
	seen := make(map[string]bool, len(a))
	for _, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, k.typeErr(kw, "an array of strings")
		}
		if seen[s] {
			return nil, k.err(kw, kw+" lists a property name twice", "list each property name once")
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

// regex measures the pattern src found at ptr (ecmaregex.Prepare), or
// reuses the schema's earlier pattern of the same source: it refuses a
// pattern over the per-pattern limit or bringing the schema's patterns
// over their total limit, before anything is compiled. The programs are
// compiled once the whole schema is known to be valid and within the
// limits (compiler.compilePatterns).
func (k *kwCompiler) regex(ptr, src string) (*pattern, error) {
	c := k.c
	if p := c.patterns[src]; p != nil {
		return p, nil
	}
	prog, err := ecmaregex.Prepare(src, c.opts.MaxPatternSize)
	if err != nil {
		// the regex package's message quotes parts of the pattern, and a
		// schema's content is never echoed in an error (SPEC §6)
		problem, fix := "pattern cannot be compiled: it is not a valid ECMA-262 regular expression", "correct the regular expression (ECMA-262 syntax)"
		switch {
		case errors.Is(err, ecmaregex.ErrTooLarge):
			problem = fmt.Sprintf("pattern cannot be compiled: it is too large (its compiled program would be over %d units, or over RE2's limits: repetition counts above 1000, nested counts multiplying past 1000)", c.opts.MaxPatternSize)
			fix = fixTooLarge
		case errors.Is(err, ecmaregex.ErrUnsupported):
			problem = "pattern cannot be compiled: it needs backtracking (look-around or a back-reference)"
			fix = "patterns run on RE2, which never backtracks: rewrite it without look-around or back-references"
		}
		return nil, c.errAt(k.loc.doc, ptr, problem, fix)
	}
	if c.patternSize += prog.Size(); c.patternSize > c.opts.MaxPatternsSize {
		return nil, c.errAt(k.loc.doc, ptr,
			fmt.Sprintf("pattern cannot be compiled: the schema's patterns are too large together (their compiled programs would be over %d units)", c.opts.MaxPatternsSize),
			"use fewer or smaller patterns: "+fixTooLarge)
	}
	p := &pattern{src: src, prog: prog, size: prog.Size()}
	c.patterns[src] = p
	c.pending = append(c.pending, p)
	return p, nil
}

// compilePatterns compiles the programs of the patterns the schema
// measured, charging c.budget (when set) a step per unit of size before
// each, so that the step limit and the deadline stop it as they stop an
// evaluation; the error is then the budget's.
func (c *compiler) compilePatterns() error {
	for _, p := range c.pending {
		if c.budget != nil && !c.budget.Charge(p.prog.Size()) {
			return c.budget.Err()
		}
		re, err := p.prog.Compile()
		if err != nil {
			return fmt.Errorf("compiling a measured pattern: %w", err)
		}
		compiledUnits.Add(int64(p.prog.Size()))
		p.re, p.prog = re, ecmaregex.Program{}
	}
	c.pending = nil
	return nil
}

// fixTooLarge is the fix of a pattern over a size limit.
const fixTooLarge = "use smaller repetition counts (x{1,1000} compiles to a thousand copies of x, and nested counts multiply), or a looser pattern with maxLength for the length"

func (k *kwCompiler) validation() error {
	n := k.n
	if v, ok := k.obj["type"]; ok {
		switch t := v.(type) {
		case string:
			if n.types = typeBit(t); n.types == 0 {
				return k.err("type", "type names an unknown type", fixFor("type", ""))
			}
		case []any:
			if len(t) == 0 {
				return k.err("type", "type is an empty array", fixFor("type", ""))
			}
			for _, e := range t {
				s, _ := e.(string)
				b := typeBit(s)
				if b == 0 {
					return k.err("type", "type lists a value that is not a type name", fixFor("type", ""))
				}
				if n.types&b != 0 {
					return k.err("type", "type lists a type twice", "list each type once")
				}
				n.types |= b
			}
		default:
			return k.typeErr("type", "a string or an array of strings")
		}
	}
	if v, ok := k.obj["enum"]; ok {
		a, ok := v.([]any)
		if !ok {
			return k.typeErr("enum", "an array of allowed values")
		}
		e := &enumSet{vals: a}
		for _, m := range a {
			switch typeOf(m) {
			case typeString:
				e.strs = append(e.strs, m.(string))
			case typeNumber:
				var num number
				if !numberOf(m, &num) {
					return k.typeErr("enum", "an array of JSON values")
				}
				e.nums = append(e.nums, num)
			default:
				e.others = append(e.others, m)
			}
		}
		if len(a) >= enumIndexMin {
			e.index = newEnumIndex(a)
		}
		n.enum = e
	}
	if v, ok := k.obj["const"]; ok {
		n.hasConst, n.constVal = true, v
	}
	var err error
	for _, p := range []struct {
		kw  string
		dst **numKw
	}{{"multipleOf", &n.multipleOf}, {"minimum", &n.minimum}, {"maximum", &n.maximum}, {"exclusiveMinimum", &n.exclMin},
		{"exclusiveMaximum", &n.exclMax}} {
		if *p.dst, err = k.number(p.kw); err != nil {
			return err
		}
	}
	if n.multipleOf != nil && n.multipleOf.n.sign() <= 0 {
		return k.err("multipleOf", "multipleOf must be greater than 0", "use a positive number such as 0.01")
	}
	for _, p := range []struct {
		kw  string
		dst *int
	}{{"minLength", &n.minLength}, {"maxLength", &n.maxLength}, {"minItems", &n.minItems}, {"maxItems", &n.maxItems},
		{"minProperties", &n.minProps}, {"maxProperties", &n.maxProps}} {
		if *p.dst, err = k.count(p.kw); err != nil {
			return err
		}
	}
	if k.loc.dia.draft == Draft2020 {
		if n.minContains, err = k.count("minContains"); err != nil {
			return err
		}
		if n.maxContains, err = k.count("maxContains"); err != nil {
			return err
		}
	}
	if v, ok := k.obj["pattern"]; ok {
		s, ok := v.(string)
		if !ok {
			return k.typeErr("pattern", "a string (a regular expression)")
		}
		if n.pattern, err = k.regex(k.loc.at("pattern"), s); err != nil {
			return err
		}
	}
	if v, ok := k.obj["uniqueItems"]; ok {
		b, ok := v.(bool)
		if !ok {
			return k.typeErr("uniqueItems", "true or false")
		}
		n.uniqueItems = b
	}
	if v, ok := k.obj["required"]; ok {
		if n.required, err = k.strings("required", v); err != nil {
			return err
		}
		n.hasRequired = true
	}
	n.depRequiredKw = kwDependentRequired
	if k.loc.dia.draft == Draft7 {
		n.depRequiredKw = kwDependencies
	}
	depKw := n.depRequiredKw.String()
	if v, ok := k.obj[depKw]; ok {
		m, ok := v.(map[string]any)
		if !ok {
			return k.typeErr(depKw, "an object of property name lists")
		}
		for _, prop := range sortedKeys(m) {
			if _, isArr := m[prop].([]any); !isArr && depKw == "dependencies" {
				continue // schema form: an applicator
			}
			req, err := k.strings(depKw, m[prop])
			if err != nil {
				return err
			}
			n.depRequired = append(n.depRequired, depRequired{prop: prop, required: req})
		}
	}
	return nil
}

func (k *kwCompiler) format() error {
	v, ok := k.obj["format"]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return k.typeErr("format", "a string")
	}
	k.n.format = s
	assert := !k.c.opts.FormatAnnotationOnly || k.loc.dia.formatVocab
	k.n.formatAssert = assert && format.Known(s)
	return nil
}

func (k *kwCompiler) schemaList(kw string) ([]*node, error) {
	v, ok := k.obj[kw]
	if !ok {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return nil, k.typeErr(kw, "a non-empty array of schemas")
	}
	out := make([]*node, len(a))
	for i := range a {
		s, err := k.sub(kw, strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (k *kwCompiler) one(kw string) (*node, error) {
	if _, ok := k.obj[kw]; !ok {
		return nil, nil
	}
	return k.sub(kw)
}

// aggregate compiles a keyword whose false value is one check per object or
// array (additionalProperties, unevaluated*, items after prefixItems).
func (k *kwCompiler) aggregate(kw string) (*node, bool, error) {
	v, ok := k.obj[kw]
	if !ok {
		return nil, false, nil
	}
	if b, ok := v.(bool); ok && !b {
		return nil, true, nil
	}
	s, err := k.sub(kw)
	return s, false, err
}

// schemaMap compiles the object of schemas at kw: its keys, sorted (a decoded
// schema keeps no key order, and sorted order keeps evaluation
// deterministic), and their nodes. Draft-07's dependencies leaves its
// property lists to validation.
func (k *kwCompiler) schemaMap(kw string) ([]string, []*node, error) {
	v, ok := k.obj[kw]
	if !ok {
		return nil, nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, k.typeErr(kw, "an object of schemas")
	}
	var keys []string
	var subs []*node
	for _, key := range sortedKeys(m) {
		if _, isArr := m[key].([]any); isArr && kw == "dependencies" {
			continue
		}
		s, err := k.sub(kw, key)
		if err != nil {
			return nil, nil, err
		}
		keys, subs = append(keys, key), append(subs, s)
	}
	return keys, subs, nil
}

func (k *kwCompiler) applicators() error {
	n := k.n
	var err error
	for _, p := range []struct {
		kw  string
		dst *[]*node
	}{{"allOf", &n.allOf}, {"anyOf", &n.anyOf}, {"oneOf", &n.oneOf}} {
		if *p.dst, err = k.schemaList(p.kw); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		kw  string
		dst **node
	}{{"not", &n.not}, {"if", &n.ifN}, {"then", &n.thenN}, {"else", &n.elseN}, {"contains", &n.contains}, {"propertyNames", &n.propNames}} {
		if *p.dst, err = k.one(p.kw); err != nil {
			return err
		}
	}
	if err := k.objectApplicators(); err != nil {
		return err
	}
	return k.arrayApplicators()
}

func (k *kwCompiler) objectApplicators() error {
	n := k.n
	keys, subs, err := k.schemaMap("properties")
	if err != nil {
		return err
	}
	for i, key := range keys {
		n.props = append(n.props, propEntry{name: key, seg: keySegment(key), n: subs[i]})
	}
	if len(n.props) > 8 {
		n.propMap = make(map[string]*node, len(n.props))
		for _, p := range n.props {
			n.propMap[p.name] = p.n
		}
	}
	if keys, subs, err = k.schemaMap("patternProperties"); err != nil {
		return err
	}
	for i, key := range keys {
		p, err := k.regex(k.loc.at("patternProperties")+"/"+escapeToken(key), key)
		if err != nil {
			return err
		}
		n.patProps = append(n.patProps, patEntry{p: p, n: subs[i]})
	}
	if n.addl, n.addlFalse, err = k.aggregate("additionalProperties"); err != nil {
		return err
	}
	n.depSchKw = "dependentSchemas"
	if k.loc.dia.draft == Draft7 {
		n.depSchKw = "dependencies"
	}
	if keys, subs, err = k.schemaMap(n.depSchKw); err != nil {
		return err
	}
	for i, key := range keys {
		n.depSchemas = append(n.depSchemas, depSchema{prop: key, n: subs[i]})
	}
	return nil
}

// arrayApplicators compiles prefixItems and items, or draft-07's array form
// of items and additionalItems after it.
func (k *kwCompiler) arrayApplicators() (err error) {
	n := k.n
	n.itemsKw = kwItems
	if k.loc.dia.draft == Draft2020 {
		n.prefix, err = k.schemaList("prefixItems")
	} else if _, isArr := k.obj["items"].([]any); isArr {
		n.prefix, err = k.schemaList("items")
		n.itemsKw = kwAdditionalItems
	}
	if err != nil {
		return err
	}
	n.items, n.itemsFalse, err = k.aggregate(n.itemsKw.String())
	return err
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
