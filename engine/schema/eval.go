package schema

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/engine/format"
)

// evaluator is the state of one Evaluate call; Schema pools them. Strings
// for the result (paths, messages) are appended to buf as failures are
// recorded and turned into one string at the end, so a valid instance
// costs a handful of allocations whatever its size.
type evaluator struct {
	Budget   // the steps spent and allowed, and the context
	depth    int
	abort    bool // step or depth limit reached, or ctx done
	bad      any  // first instance value of an unsupported Go type
	useScope bool

	// keep is how many failures are recorded in full; past it, omitted
	// counts them and omittedKw holds their keywords, in order of first
	// appearance.
	keep      int
	omitted   int
	omittedKw []kwID

	nodes         []*node // the schema's, by id
	passed, total int
	fails         []failRec
	last          failure   // the failure whose Report the last spans hold (zero when none)
	pend          []pending // object()'s property values, a stack
	spans         []spans
	buf           []byte
	described     []descRec
	decls         []declRec
	scope         []*resource
	gen           uint64 // bumped by every rollback of buf
}

// frame is one instance location; frames live on the Go stack and link to
// their parent, so paths are only built when something is reported.
type frame struct {
	parent    *frame
	key       string
	idx       int    // array index, or -1 for an object key (or the root), plainKey for one that needs no escaping
	declStart int    // e.decls length when the location was entered
	dStart    int    // e.described length when the location was entered
	descents  int    // applicators that descended into children here
	pgen      uint64 // e.gen+1 when p0, p1 hold this location's path in buf
	p0, p1    int32
}

// declRec is a subschema with properties or patternProperties applied at
// the current location; present counts the instance keys its properties
// named.
type declRec struct {
	node            int32 // id
	present         int32
	props, patProps bool // the node has properties, patternProperties
}

// descRec is a described location, kept as its parent's path (a span of
// buf, shared by all its children) and its own segment (an array index, or
// a key copied into buf). The whole path is only built to tell locations
// apart when several applicators described the same one, or to report
// undeclared keys.
type descRec struct {
	pp0, pp1   int32    // the parent's instance path in buf
	idx        int32    // the array index, or negative for a key
	s0, s1     int32    // else the key's segment in buf (empty at the root)
	undeclared []string // the keys no subschema here declares, sorted
}

// appendDescPath appends d's RFC 6901 instance path to b.
func (e *evaluator) appendDescPath(b []byte, d *descRec) []byte {
	b = append(b, e.buf[d.pp0:d.pp1]...)
	if d.idx >= 0 {
		return appendSegment(b, "", int(d.idx))
	}
	return append(b, e.buf[d.s0:d.s1]...)
}

// failure is a failed check as a keyword reports it to fail.
type failure struct {
	kw kwID // the keyword reported
	// at is the keyword whose location is reported, when not kw: an
	// applicator's for a false subschema (kw kwFalse) under it. kwSelf, the
	// zero value, means kw itself, or the schema's own location for kwFalse.
	at    kwID
	node  int32    // the failing schema's id (evaluator.nodes)
	a, b  int      // the keyword's figures: a length, indices, counts (report.go)
	v     any      // the instance value
	names []string // the missing, extra or invalid property names
}

// failRec is a recorded failure: its instance path in buf and the index of
// its Report's spans. It holds nothing of the instance.
type failRec struct{ p0, p1, report int32 }

// location is the keyword whose location r reports, or kwSelf for the
// schema's own.
func (r *failure) location() kwID {
	if r.at == kwSelf && r.kw != kwFalse {
		return r.kw
	}
	return r.at
}

// mark is a restore point for branches whose outcome is discarded.
type mark struct {
	passed, total, fails, spans, buf, described, decls int
	omitted, omittedKw                                 int
}

func (e *evaluator) mark() mark {
	return mark{e.passed, e.total, len(e.fails), len(e.spans), len(e.buf), len(e.described), len(e.decls), e.omitted, len(e.omittedKw)}
}

func (e *evaluator) rollback(m mark) {
	e.gen++ // cached paths may lie in the discarded part of buf
	e.passed, e.total = m.passed, m.total
	e.fails = e.fails[:m.fails]
	if len(e.spans) > m.spans {
		e.spans, e.last = e.spans[:m.spans], failure{}
	}
	e.buf = e.buf[:m.buf]
	clear(e.described[m.described:])
	e.described = e.described[:m.described]
	e.decls = e.decls[:m.decls]
	e.omitted = m.omitted
	e.omittedKw = e.omittedKw[:m.omittedKw]
}

func (e *evaluator) reset(s *Schema) {
	e.Budget = NewBudget(context.Background(), s.maxSteps)
	e.depth, e.abort, e.bad = 0, false, nil
	e.keep, e.omitted, e.omittedKw = math.MaxInt, 0, e.omittedKw[:0]
	e.useScope = s.useScope
	e.nodes = s.nodes
	e.passed, e.total = 0, 0
	e.fails, e.spans, e.last = e.fails[:0], e.spans[:0], failure{}
	e.pend = e.pend[:0]
	e.buf = e.buf[:0]
	e.described = e.described[:0]
	e.decls = e.decls[:0]
	e.scope = e.scope[:0]
}

// release drops references into the instance before pooling.
func (e *evaluator) release() {
	e.last = failure{}
	clear(e.described)
	clear(e.pend[:cap(e.pend)]) // object leaves values past the length
	clear(e.scope)
	if cap(e.buf) > 1<<20 {
		e.buf = nil
	}
}

func (e *evaluator) run(root *node, inst any) (*Result, error) {
	f := frame{idx: -1}
	valid := e.eval(root, inst, &f, true, nil)
	e.finishFrame(&f, inst)
	if e.abort {
		return nil, e.abortErr()
	}
	if e.bad != nil {
		return nil, fmt.Errorf("evaluating instance: unsupported value of Go type %T", e.bad)
	}
	return e.result(valid), nil
}

// pass counts a check that held.
func (e *evaluator) pass(count bool) {
	if count {
		e.total++
		e.passed++
	}
}

// fail counts a failed check and records r at location f with its
// Report (past keep, only counts it). Nothing is recorded when count is
// false.
func (e *evaluator) fail(count bool, f *frame, r failure) {
	if !count {
		return
	}
	e.total++
	if len(e.fails) >= e.keep {
		e.omit(r.kw)
		return
	}
	p0, p1 := e.path(f)
	e.fails = append(e.fails, failRec{p0, p1, e.report(&r)})
}

// recording reports whether a failed check counted now would be recorded
// in full, so that what only its record needs (the names of missing or
// extra properties) is worked out only then.
func (e *evaluator) recording(count bool) bool {
	return count && len(e.fails) < e.keep
}

// omit counts a failure past keep, remembering its keyword.
func (e *evaluator) omit(kw kwID) {
	e.omitted++
	if !slices.Contains(e.omittedKw, kw) {
		e.omittedKw = append(e.omittedKw, kw)
	}
}

// path returns the span of buf holding the RFC 6901 pointer of location f,
// building it on first use. It is small enough to inline: a pointer built
// before costs no call.
func (e *evaluator) path(f *frame) (p0, p1 int32) {
	if f.pgen <= e.gen { // built before the last rollback, or never
		e.buf = e.appendPath(e.buf, f, int32(len(e.buf)))
	}
	return f.p0, f.p1
}

// appendPath appends the pointer of location f to b, which is buf holding
// nothing after p0: the nearest ancestor whose pointer was built is copied
// once and the segments below it appended, each location on the way
// getting its own pointer as a prefix of f's (the root's is empty). A
// parent already built is copied here rather than in a call of its own:
// once per failure, the usual case of an item's field. It works on b, not
// e.buf, so that growing the path stores no slice in the evaluator but the
// last.
func (e *evaluator) appendPath(b []byte, f *frame, p0 int32) []byte {
	gen := e.gen + 1
	if p := f.parent; p != nil {
		if p.pgen == gen {
			b = append(b, b[p.p0:p.p1]...)
		} else {
			b = e.appendPath(b, p, p0)
		}
		b = appendSegment(b, f.key, f.idx)
	}
	f.p0, f.p1, f.pgen = p0, int32(len(b)), gen
	return b
}

// plainKey, as a frame's idx, marks an object key known (from the
// compiled schema) to need no RFC 6901 escaping.
const plainKey = -2

// keySegment is the frame idx for key: plainKey when it holds no '~' or
// '/', else -1.
func keySegment(key string) int {
	if strings.ContainsAny(key, "~/") {
		return -1
	}
	return plainKey
}

// appendSegment appends the pointer segment of an array index (idx >= 0)
// or an object key.
func appendSegment(b []byte, key string, idx int) []byte {
	b = append(b, '/')
	if idx >= 0 {
		return strconv.AppendInt(b, int64(idx), 10)
	}
	if idx == plainKey {
		return append(b, key...)
	}
	return append(b, escapeToken(key)...)
}

// eval applies n to v at location f. count selects whether the checks are
// counted and reported (false inside anyOf, oneOf, not, contains and if,
// where only the verdict matters and evaluation stops at the first failure).
// ann, when non-nil, collects the properties and items evaluated here for
// unevaluated*.
func (e *evaluator) eval(n *node, v any, f *frame, count bool, ann *annot) bool {
	if n.boolean != 0 {
		if n.boolean > 0 {
			return true
		}
		e.fail(count, f, failure{kw: kwFalse, node: n.id, v: v})
		return false
	}
	for n.pureRef && !e.useScope {
		n = n.ref
	}
	if n.boolean != 0 {
		return e.eval(n, v, f, count, ann)
	}
	if !e.enter() {
		return false
	}
	pushed := false
	if e.useScope && (len(e.scope) == 0 || e.scope[len(e.scope)-1] != n.res) {
		e.scope = append(e.scope, n.res)
		pushed = true
	}
	var ok bool
	if n.unevalProps != nil || n.unevalPropsFalse || n.unevalItems != nil || n.unevalItemsFalse {
		local := &annot{}
		ok = e.body(n, v, f, count, local)
		if ok && ann != nil {
			ann.merge(local)
		}
	} else {
		ok = e.body(n, v, f, count, ann)
	}
	if pushed {
		e.scope = e.scope[:len(e.scope)-1]
	}
	e.depth--
	return ok
}

func (e *evaluator) body(n *node, v any, f *frame, count bool, ann *annot) bool {
	valid := true
	// goOn notes an outcome in valid and reports whether to go on:
	// without count, the first failure decides.
	goOn := func(ok bool) bool {
		valid = valid && ok
		return ok || count
	}
	if n.ref != nil && !goOn(e.eval(n.ref, v, f, count, ann)) {
		return false
	}
	if n.dynRef != nil {
		t := n.dynRef
		if n.dynName != "" {
			for _, r := range e.scope {
				if d := r.dyn[n.dynName]; d != nil {
					t = d
					break
				}
			}
		}
		if !goOn(e.eval(t, v, f, count, ann)) {
			return false
		}
	}
	if !goOn(e.value(n, v, f, count)) {
		return false
	}
	if n.inPlace && !goOn(e.inPlace(n, v, f, count, ann)) {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if n.anyObj && !e.object(n, x, f, count, ann) {
			valid = false
		}
	case []any:
		if n.anyArr && !e.array(n, x, f, count, ann) {
			valid = false
		}
	}
	return valid
}

// value evaluates the assertions on the value itself: type, enum, const and
// the string and number keywords.
func (e *evaluator) value(n *node, v any, f *frame, count bool) bool {
	if e.steps += valueSteps(n, v); e.over() {
		return false
	}
	switch v.(type) {
	case string, map[string]any, []any, bool, nil:
	default:
		return e.number(n, v, f, count)
	}
	valid := true
	check := func(ok bool, kw kwID, a int) bool {
		if ok {
			e.pass(count)
			return true
		}
		e.fail(count, f, failure{kw: kw, node: n.id, v: v, a: a})
		valid = false
		return count
	}
	if n.types != 0 && !check(typeMatches(n.types, v, false), kwType, 0) {
		return false
	}
	if n.enum != nil && !check(n.enum.has(v), kwEnum, 0) {
		return false
	}
	if n.hasConst && !check(jsonEqual(n.constVal, v), kwConst, 0) {
		return false
	}
	s, ok := v.(string)
	if !ok || !n.anyStr {
		return valid
	}
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLength >= 0 && !check(l >= n.minLength, kwMinLength, l) {
			return false
		}
		if n.maxLength >= 0 && !check(l <= n.maxLength, kwMaxLength, l) {
			return false
		}
	}
	if n.pattern != nil && !check(n.pattern.match(s), kwPattern, 0) {
		return false
	}
	if n.formatAssert {
		check(format.Valid(n.format, s), kwFormat, 0)
	}
	return valid
}

// number is value for a number v: every check runs (numberChecks) and each
// that failed is recorded, in numChecks' order.
func (e *evaluator) number(n *node, v any, f *frame, count bool) bool {
	var num number
	if !numberOf(v, &num) {
		e.bad = v
		return false
	}
	held, failed := numberChecks(n, &num, v)
	e.held(held, count)
	for m := failed; m != 0; m &= m - 1 {
		e.fail(count, f, failure{kw: numChecks[bits.TrailingZeros8(m)], node: n.id, v: v})
	}
	return failed == 0
}

func typeMatches(types uint8, v any, isInt bool) bool {
	switch v.(type) {
	case string:
		return types&typeString != 0
	case map[string]any:
		return types&typeObject != 0
	case []any:
		return types&typeArray != 0
	case bool:
		return types&typeBool != 0
	case nil:
		return types&typeNull != 0
	}
	return types&typeNumber != 0 || (isInt && types&typeInteger != 0)
}

// inPlace evaluates the applicators that apply to the same location.
func (e *evaluator) inPlace(n *node, v any, f *frame, count bool, ann *annot) bool {
	valid := true
	goOn := func(ok bool) bool { // as in body
		valid = valid && ok
		return ok || count
	}
	check := func(ok bool, kw kwID, a, b int) bool {
		if ok {
			e.pass(count)
		} else {
			e.fail(count, f, failure{kw: kw, node: n.id, v: v, a: a, b: b})
		}
		return goOn(ok)
	}
	for _, s := range n.allOf {
		if !goOn(e.eval(s, v, f, count, ann)) {
			return false
		}
	}
	if n.anyOf != nil {
		matched := 0
		for _, s := range n.anyOf {
			if e.branch(s, v, f, ann) {
				matched++
				if !count && ann == nil {
					break
				}
			}
		}
		if !check(matched > 0, kwAnyOf, len(n.anyOf), 0) {
			return false
		}
	}
	if n.oneOf != nil {
		first, second := -1, -1
		for i, s := range n.oneOf {
			if e.branch(s, v, f, ann) {
				if first < 0 {
					first = i
				} else {
					second = i
					break
				}
			}
		}
		if !check(first >= 0 && second < 0, kwOneOf, first, second) {
			return false
		}
	}
	if n.not != nil {
		m := e.mark()
		matched := e.eval(n.not, v, f, false, nil)
		e.rollback(m)
		if !check(!matched, kwNot, 0, 0) {
			return false
		}
	}
	if n.ifN != nil {
		cond := e.branch(n.ifN, v, f, ann)
		e.pass(count) // the condition selects a branch; it never fails
		next := n.elseN
		if cond {
			next = n.thenN
		}
		if next != nil && !goOn(e.eval(next, v, f, count, ann)) {
			return false
		}
	}
	if n.depSchemas != nil {
		if obj, ok := v.(map[string]any); ok {
			for _, d := range n.depSchemas {
				if _, has := obj[d.prop]; !has {
					continue
				}
				if !goOn(e.eval(d.n, v, f, count, ann)) {
					return false
				}
			}
		}
	}
	return valid
}

// branch evaluates an alternative without counting; a failed branch leaves
// no trace, a successful one keeps its annotations and described objects.
func (e *evaluator) branch(s *node, v any, f *frame, ann *annot) bool {
	m := e.mark()
	var ba *annot
	if ann != nil {
		ba = &annot{}
	}
	ok := e.eval(s, v, f, false, ba)
	if !ok {
		e.rollback(m)
	} else if ba != nil {
		ann.merge(ba)
	}
	return ok
}

// descend applies n to the child value v of the location pf, at key or
// array index idx.
func (e *evaluator) descend(n *node, v any, pf *frame, key string, idx int, count bool) bool {
	if n.boolean > 0 {
		return true
	}
	f := frame{parent: pf, key: key, idx: idx, declStart: len(e.decls), dStart: len(e.described)}
	if n.leaf {
		// What eval does for a schema without applicators: nothing here
		// looks at the dynamic scope or annotations, or describes.
		if !e.enter() {
			return false
		}
		ok := e.value(n, v, &f, count)
		e.depth--
		return ok
	}
	ok := e.eval(n, v, &f, count, nil)
	if len(e.decls) > f.declStart || f.descents > 1 {
		e.finishFrame(&f, v)
	}
	return ok
}

// enter charges a schema application one step and descends a level; past
// the step or depth limit it aborts the evaluation, undoes the level and
// reports false.
func (e *evaluator) enter() bool {
	e.steps++
	e.depth++
	if e.depth > maxEvalDepth || e.over() {
		e.abort = true
		e.depth--
		return false
	}
	return true
}
