package schema

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// dialect is the draft and the vocabularies in force for a schema resource.
type dialect struct {
	draft       Draft
	metaURI     string // meta-schema that documents of this dialect are checked against
	applicator  bool
	unevaluated bool
	validation  bool
	formatVocab bool // format-assertion vocabulary in use: format always asserts
}

// dialectOf returns the dialect of draft's own meta-schema.
func dialectOf(draft Draft) *dialect {
	if draft == Draft7 {
		return &dialect{draft: Draft7, metaURI: meta7URI, applicator: true, validation: true}
	}
	return &dialect{draft: Draft2020, metaURI: meta2020URI, applicator: true, unevaluated: true, validation: true}
}

const vocabPrefix = "https://json-schema.org/draft/2020-12/vocab/"

// compiler holds the state of one Compile call.
type compiler struct {
	opts      Options
	docs      map[string]*document  // loaded documents by retrieval URI
	res       map[string]*schemaLoc // resource URI -> resource root
	anchors   map[string]*schemaLoc // resource URI + "#" + anchor name
	resources []*resource
	main      *document
	nodes     []*node // every compiled node, by id
	needDyn   bool
	typos     []KeywordTypo // likely misspelt keywords of the main document

	// patterns are the schema's patterns by source, each compiled once;
	// patternSize is the sum of their sizes (ecmaregex.Program.Size);
	// pending are those measured and not yet compiled.
	patterns    map[string]*pattern
	patternSize int
	pending     []*pattern
	// budget, when not nil, is charged a step per unit of pattern size
	// before a pattern compiles.
	budget *Budget
	// check compiles no pattern program: the schema is only checked.
	check bool
}

// document is one loaded schema document.
type document struct {
	uri  string
	raw  any
	main bool
	locs map[string]*schemaLoc // scanned schema locations by pointer
}

// schemaLoc is a schema position inside a document.
type schemaLoc struct {
	doc  *document
	ptr  string
	raw  any
	base string // base URI in effect
	res  *resource
	dia  *dialect
	node *node
}

func (l *schemaLoc) at(kw string) string { return l.ptr + "/" + escapeToken(kw) }

// errAt builds an *Error for a position in document d.
func (c *compiler) errAt(d *document, ptr, problem, fix string) *Error {
	if d != nil && !d.main {
		ptr = d.uri + "#" + ptr
	}
	return &Error{Pointer: ptr, Problem: problem, Fix: fix}
}

// compileRoot compiles doc as the main document and returns its root node.
func (c *compiler) compileRoot(doc any) (*node, error) {
	d, err := c.load(defaultBase, doc, dialectOf(c.opts.DefaultDraft), true)
	if err != nil {
		return nil, err
	}
	c.main = d
	// Compile every scanned subschema of the main document so errors in
	// unreferenced $defs surface too; sorted, the root first, for a
	// deterministic first error.
	for _, p := range slices.Sorted(maps.Keys(d.locs)) {
		if _, err := c.compile(d.locs[p]); err != nil {
			return nil, err
		}
	}
	if err := c.compileDynamic(); err != nil {
		return nil, err
	}
	if err := c.checkCycles(); err != nil {
		return nil, err
	}
	return d.locs[""].node, nil
}

// compileDynamic compiles the $dynamicAnchor targets of every loaded
// resource once some $dynamicRef may look them up.
func (c *compiler) compileDynamic() error {
	for i := 0; c.needDyn && i < len(c.resources); i++ {
		r := c.resources[i]
		r.dyn = make(map[string]*node, len(r.dynLocs))
		for _, name := range slices.Sorted(maps.Keys(r.dynLocs)) {
			n, err := c.compile(r.dynLocs[name])
			if err != nil {
				return err
			}
			r.dyn[name] = n
		}
	}
	return nil
}

// load registers a document and scans it for resources and anchors.
func (c *compiler) load(uri string, raw any, dia *dialect, main bool) (*document, error) {
	d := &document{uri: uri, raw: raw, main: main, locs: map[string]*schemaLoc{}}
	c.docs[uri] = d
	if obj, ok := raw.(map[string]any); ok {
		if sv, ok := obj["$schema"]; ok {
			s, ok := sv.(string)
			if !ok {
				return nil, c.errAt(d, "/$schema", "$schema must be a string", `write the meta-schema URI, e.g. "https://json-schema.org/draft/2020-12/schema"`)
			}
			nd := c.dialectFor(s, 0)
			if nd == nil {
				return nil, c.errAt(d, "/$schema", "$schema names a draft this verifier does not know", unknownDraftFix)
			}
			dia = nd
		}
	}
	r := &resource{dynLocs: map[string]*schemaLoc{}}
	c.resources = append(c.resources, r)
	if err := c.scan(d, raw, "", uri, r, dia); err != nil {
		return nil, err
	}
	addFirst(c.res, uri, d.locs[""])
	return d, nil
}

const unknownDraftFix = `use "https://json-schema.org/draft/2020-12/schema" or "http://json-schema.org/draft-07/schema#", or leave $schema out for draft 2020-12`

// dialectFor returns the dialect a $schema URI names: one of the two
// drafts, or a meta-schema in the registry built on draft 2020-12; nil for
// any other URI, or a meta-schema that requires a vocabulary this package
// does not implement.
func (c *compiler) dialectFor(s string, depth int) *dialect {
	u := strings.TrimSuffix(s, "#")
	switch u {
	case meta2020URI:
		return dialectOf(Draft2020)
	case meta7URI, "https://json-schema.org/draft-07/schema":
		return dialectOf(Draft7)
	}
	norm, err := normalizeURI(u)
	if err != nil || depth > 8 || c.opts.Registry == nil || c.opts.Registry.docs[norm] == nil {
		return nil
	}
	obj, _ := c.opts.Registry.docs[norm].raw.(map[string]any)
	parent, _ := obj["$schema"].(string)
	pd := c.dialectFor(parent, depth+1)
	if pd == nil {
		return nil
	}
	d := *pd
	d.metaURI = norm
	voc, ok := obj["$vocabulary"].(map[string]any)
	if !ok || d.draft != Draft2020 {
		return &d
	}
	d.applicator, d.unevaluated, d.validation = false, false, false
	for k, v := range voc {
		switch k {
		case vocabPrefix + "core", vocabPrefix + "meta-data", vocabPrefix + "content", vocabPrefix + "format-annotation":
		case vocabPrefix + "applicator":
			d.applicator = true
		case vocabPrefix + "unevaluated":
			d.unevaluated = true
		case vocabPrefix + "validation":
			d.validation = true
		case vocabPrefix + "format-assertion":
			d.formatVocab = true
		default:
			if required, _ := v.(bool); required {
				return nil
			}
		}
	}
	return &d
}

var anchorRE = regexp.MustCompile(`^[A-Za-z_][-A-Za-z0-9._]*$`)

// schema-valued keywords, by container shape
var (
	mapKw2020 = []string{"$defs", "definitions", "properties", "patternProperties", "dependentSchemas"}
	arrKw2020 = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	oneKw2020 = []string{"items", "additionalProperties", "propertyNames", "contains", "if", "then", "else",
		"not", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	mapKw7 = []string{"definitions", "properties", "patternProperties", "dependencies"}
	arrKw7 = []string{"allOf", "anyOf", "oneOf", "items"}
	oneKw7 = []string{"items", "additionalItems", "additionalProperties", "propertyNames", "contains",
		"if", "then", "else", "not"}
)

// scan registers the schema at ptr and every subschema under it.
func (c *compiler) scan(d *document, raw any, ptr, base string, res *resource, dia *dialect) error {
	if _, done := d.locs[ptr]; done {
		return nil
	}
	loc := &schemaLoc{doc: d, ptr: ptr, raw: raw, base: base, res: res, dia: dia}
	d.locs[ptr] = loc
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	if d.main {
		c.typos = append(c.typos, keywordTypos(obj, ptr, dia.draft)...)
	}
	_, hasRef := obj["$ref"]
	if idv, ok := obj["$id"]; ok && !(dia.draft == Draft7 && hasRef) {
		id, ok := idv.(string)
		if !ok {
			return c.errAt(d, loc.at("$id"), "$id must be a string", "write the schema's URI as a string, or remove $id")
		}
		abs, frag, err := resolveURI(base, id)
		if err != nil {
			return c.errAt(d, loc.at("$id"), "$id is not a valid URI reference", "use an absolute URI such as https://example.com/schemas/invoice.json")
		}
		if frag != "" && dia.draft == Draft2020 {
			return c.errAt(d, loc.at("$id"), "$id contains a fragment", "move the fragment name to $anchor and keep $id a plain URI")
		}
		if !strings.HasPrefix(id, "#") && (ptr != "" || abs != base) {
			res = &resource{dynLocs: map[string]*schemaLoc{}}
			c.resources = append(c.resources, res)
			base = abs
			addFirst(c.res, abs, loc)
			if sv, ok := obj["$schema"].(string); ok && ptr != "" {
				nd := c.dialectFor(sv, 0)
				if nd == nil {
					return c.errAt(d, loc.at("$schema"), "$schema names a draft this verifier does not know", unknownDraftFix)
				}
				dia = nd
			}
		} else if ptr == "" {
			addFirst(c.res, abs, loc)
		}
		if frag != "" { // draft-07 location-independent identifier
			addFirst(c.anchors, base+"#"+frag, loc)
		}
		loc.base, loc.res, loc.dia = base, res, dia
	}
	if dia.draft == Draft2020 {
		for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
			av, ok := obj[kw]
			if !ok {
				continue
			}
			a, ok := av.(string)
			if !ok || !anchorRE.MatchString(a) {
				return c.errAt(d, loc.at(kw), kw+" must be a plain name", "start it with a letter or underscore and use only letters, digits, '-', '_' and '.'")
			}
			addFirst(c.anchors, base+"#"+a, loc)
			if kw == "$dynamicAnchor" {
				addFirst(res.dynLocs, a, loc)
			}
		}
	}
	mapKw, arrKw, oneKw := mapKw2020, arrKw2020, oneKw2020
	if dia.draft == Draft7 {
		mapKw, arrKw, oneKw = mapKw7, arrKw7, oneKw7
	}
	// a keyword holding a value of another shape is left to compile's error
	for _, kw := range mapKw {
		m, _ := obj[kw].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) { // the first of two equal $ids or anchors is always the same
			v := m[k]
			if _, isArr := v.([]any); isArr && kw == "dependencies" {
				continue
			}
			if err := c.scan(d, v, loc.at(kw)+"/"+escapeToken(k), base, res, dia); err != nil {
				return err
			}
		}
	}
	for _, kw := range arrKw {
		a, _ := obj[kw].([]any)
		for i, v := range a {
			if err := c.scan(d, v, loc.at(kw)+"/"+strconv.Itoa(i), base, res, dia); err != nil {
				return err
			}
		}
	}
	for _, kw := range oneKw {
		v, ok := obj[kw]
		if _, isArr := v.([]any); ok && !isArr {
			if err := c.scan(d, v, loc.at(kw), base, res, dia); err != nil {
				return err
			}
		}
	}
	return nil
}

// addFirst sets m[k] to v unless m holds k already: the first definition of
// a URI or an anchor wins.
func addFirst[K comparable, V any](m map[K]V, k K, v V) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// locAt returns the schema location at ptr in d, scanning it on demand when
// it lies outside the keywords the scan knows (e.g. a $ref into an unknown
// keyword). Its base is that of the nearest scanned ancestor.
func (c *compiler) locAt(d *document, ptr string) (*schemaLoc, bool) {
	if l := d.locs[ptr]; l != nil {
		return l, true
	}
	raw, ok := walkPointer(d.raw, ptr)
	if !ok {
		return nil, false
	}
	parent := d.locs[""]
	for anc := ptr; anc != ""; { // walkPointer accepted ptr: every ancestor is "" or starts with '/'
		anc = anc[:strings.LastIndexByte(anc, '/')]
		if l := d.locs[anc]; l != nil {
			parent = l
			break
		}
	}
	if err := c.scan(d, raw, ptr, parent.base, parent.res, parent.dia); err != nil {
		return nil, false
	}
	return d.locs[ptr], true
}

// resolveRef resolves a $ref or $dynamicRef value found at kwPtr of from.
func (c *compiler) resolveRef(from *schemaLoc, kw, ref string) (*schemaLoc, string, error) {
	kwPtr := from.at(kw)
	abs, frag, err := resolveURI(from.base, ref)
	if err != nil {
		return nil, "", c.errAt(from.doc, kwPtr, kw+" is not a valid URI reference", `write a reference such as "#/$defs/item"`)
	}
	root, err := c.resource(abs)
	if err != nil {
		return nil, "", err
	}
	if root == nil {
		return nil, "", c.errAt(from.doc, kwPtr, kw+" points outside the document",
			"remote references are not fetched; inline the schema under $defs and refer to it as \"#/$defs/name\"")
	}
	if frag == "" {
		return root, "", nil
	}
	if frag[0] == '/' {
		l, ok := c.locAt(root.doc, root.ptr+frag)
		if !ok {
			return nil, "", c.errAt(from.doc, kwPtr, kw+" points to nothing", "point it at an existing subschema, e.g. \"#/$defs/name\"")
		}
		return l, "", nil
	}
	l := c.anchors[abs+"#"+frag]
	if l == nil {
		return nil, "", c.errAt(from.doc, kwPtr, kw+" names an anchor that does not exist", "declare it with $anchor (draft-07: $id \"#name\") or point at a subschema with a JSON pointer")
	}
	return l, frag, nil
}

// resource returns the root of the resource abs, loading a registry document
// on demand; nil when no loaded or registered document defines it.
func (c *compiler) resource(abs string) (*schemaLoc, error) {
	if l := c.res[abs]; l != nil {
		return l, nil
	}
	builtin, err := builtinRegistry()
	if err != nil {
		return nil, err
	}
	for _, r := range []*Registry{c.opts.Registry, builtin} {
		if r == nil {
			continue
		}
		rd := r.index[abs]
		if rd == nil || c.docs[rd.uri] != nil {
			continue
		}
		// a registered document without $schema takes the main document's dialect
		if _, err := c.load(rd.uri, rd.raw, c.main.locs[""].dia, false); err != nil {
			return nil, err
		}
		if l := c.res[abs]; l != nil {
			return l, nil
		}
	}
	return nil, nil
}
