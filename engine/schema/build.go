package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Compile compiles a decoded JSON Schema document (decoded with
// json.Decoder.UseNumber: map[string]any, []any, string, bool, nil,
// json.Number). An invalid schema is reported as an *Error naming the place
// inside doc and how to fix it.
//
// Patterns are measured before they compile and refused past
// Options.MaxPatternSize and MaxPatternsSize; CompileWith also charges
// their compilation to a budget.
func Compile(doc any, opts *Options) (*Schema, error) {
	return compileDoc(doc, opts, &compiler{})
}

// CompileWith is Compile charging b a step per unit of pattern size
// (ecmaregex.Program.Size) before each distinct pattern compiles, so that
// b's step limit and context bound the compilation as they bound an
// evaluation: when b stops it, the error is b.Err() (ErrTooComplex, or one
// wrapping the context's error). b is left charged with
// Schema.CompileSteps.
func CompileWith(doc any, opts *Options, b *Budget) (*Schema, error) {
	return compileDoc(doc, opts, &compiler{budget: b})
}

// Check reports the *Error Compile would report for doc, with every limit
// of Compile, without compiling any pattern: its cost is about linear in
// doc, however large the programs of doc's patterns would be. It is the
// check of a request that may not be served (one that has not paid), which
// must not cost what serving it would.
func Check(doc any, opts *Options) error {
	_, err := compileDoc(doc, opts, &compiler{check: true})
	return err
}

// compileDoc compiles doc with c's budget and mode.
func compileDoc(doc any, opts *Options, c *compiler) (*Schema, error) {
	o := opts.withDefaults()
	if err := checkDepth(doc, "", 0); err != nil {
		return nil, err
	}
	s, c, err := build(doc, o, c)
	if err != nil {
		return nil, err
	}
	if err := c.checkMeta(doc); err != nil {
		return nil, err
	}
	if c.check {
		return s, nil
	}
	if err := c.compilePatterns(); err != nil {
		return nil, err
	}
	s.size = s.heapSize()
	return s, nil
}

// build compiles doc without the meta-schema check and without compiling
// its patterns' programs (compilePatterns), with c's budget and mode (a
// new compiler when nil).
func build(doc any, o Options, c *compiler) (*Schema, *compiler, error) {
	if c == nil {
		c = &compiler{}
	}
	c.opts, c.docs, c.res, c.anchors = o, map[string]*document{}, map[string]*schemaLoc{}, map[string]*schemaLoc{}
	c.patterns = map[string]*pattern{}
	root, err := c.compileRoot(doc)
	if err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(c.typos, func(a, b KeywordTypo) int { return strings.Compare(a.Pointer, b.Pointer) })
	s := &Schema{root: root, nodes: c.nodes, maxSteps: o.MaxSteps, useScope: c.needDyn, typos: c.typos,
		patternSize: c.patternSize}
	return s, c, nil
}

// checkDepth rejects documents nested deeper than maxSchemaDepth.
func checkDepth(v any, ptr string, depth int) error {
	if depth > maxSchemaDepth {
		return &Error{Pointer: ptr, Problem: fmt.Sprintf("the schema is nested more than %d levels deep", maxSchemaDepth),
			Fix: "flatten it by moving subschemas under $defs and referring to them with $ref"}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if err := checkDepth(c, ptr+"/"+escapeToken(k), depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, c := range x {
			if err := checkDepth(c, ptr+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCycles rejects reference loops that apply a schema to the same
// instance location again without consuming any input ({"$ref": "#"}):
// evaluating them would never end.
func (c *compiler) checkCycles() error {
	const (
		white = iota
		grey
		black
	)
	color := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		if color[n] == black {
			return nil
		}
		color[n] = grey
		for _, e := range inPlaceEdges(n) {
			if color[e.to] == grey {
				return &Error{Pointer: n.loc + "/" + e.kw,
					Problem: "this reference leads back to a schema that is already being applied to the same value, so evaluation would never end",
					Fix:     "make the loop pass through properties or items (so it moves into the value), or remove the reference"}
			}
			if err := visit(e.to); err != nil {
				return err
			}
		}
		color[n] = black
		return nil
	}
	for _, n := range c.nodes { // by id: the first error is the same every time
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}

type edge struct {
	kw string
	to *node
}

func inPlaceEdges(n *node) []edge {
	var out []edge
	if n.ref != nil {
		out = append(out, edge{"$ref", n.ref})
	}
	if n.dynRef != nil && n.dynName == "" {
		out = append(out, edge{"$dynamicRef", n.dynRef})
	}
	for i, s := range n.allOf {
		out = append(out, edge{"allOf/" + strconv.Itoa(i), s})
	}
	for i, s := range n.anyOf {
		out = append(out, edge{"anyOf/" + strconv.Itoa(i), s})
	}
	for i, s := range n.oneOf {
		out = append(out, edge{"oneOf/" + strconv.Itoa(i), s})
	}
	for _, p := range []struct {
		kw string
		n  *node
	}{{"not", n.not}, {"if", n.ifN}, {"then", n.thenN}, {"else", n.elseN}} {
		if p.n != nil {
			out = append(out, edge{p.kw, p.n})
		}
	}
	for _, d := range n.depSchemas {
		out = append(out, edge{n.depSchKw + "/" + escapeToken(d.prop), d.n})
	}
	return out
}

// metaSchemas compiles the embedded meta-schemas once, with format as an
// annotation; the compiled schemas are read-only.
var metaSchemas = sync.OnceValues(func() (map[string]*Schema, error) {
	out := map[string]*Schema{}
	for _, uri := range []string{meta2020URI, meta7URI} {
		// each meta-schema names its own draft with $schema
		s, c, err := build(map[string]any{"$ref": uri}, (&Options{FormatAnnotationOnly: true}).withDefaults(), nil)
		if err == nil {
			err = c.compilePatterns()
		}
		if err != nil {
			return nil, fmt.Errorf("compiling meta-schema %s: %w", uri, err)
		}
		out[uri] = s
	}
	return out, nil
})

// checkMeta validates the main document against the meta-schema of its
// dialect and turns the first failure into an *Error.
func (c *compiler) checkMeta(doc any) error {
	dia := c.main.locs[""].dia
	metas, err := metaSchemas()
	if err != nil {
		return err
	}
	ms, ok := metas[dia.metaURI]
	if !ok {
		o := c.opts
		o.FormatAnnotationOnly = true
		var mc *compiler
		if ms, mc, err = build(map[string]any{"$ref": dia.metaURI}, o, nil); err != nil {
			return err
		}
		if err := mc.compilePatterns(); err != nil {
			return err
		}
	}
	// meta evaluation is linear in the schema size
	limited := &Schema{root: ms.root, nodes: ms.nodes, maxSteps: 1000*len(c.nodes) + DefaultMaxSteps, useScope: ms.useScope}
	res, err := limited.Evaluate(doc)
	if err != nil {
		return &Error{Problem: "the schema is too large to check against its meta-schema", Fix: "split it into smaller schemas"}
	}
	if res.Valid {
		return nil
	}
	f := res.Failures[0]
	return &Error{Pointer: f.InstancePath, Problem: "the schema does not fit its draft's meta-schema: expected " + f.Expected,
		Fix: fmt.Sprintf("change it to match the meta-schema (expected %s at %s)", f.Expected, f.KeywordLocation)}
}
