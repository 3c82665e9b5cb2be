package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// evaluator is the state of one Evaluate call; Schema pools them. Strings
// for the result (paths, messages) are appended to buf during and after the
// evaluation and turned into one string at the end, so a valid instance
// costs a handful of allocations whatever its size.
type evaluator struct {
	Budget   // the steps spent and allowed, and the context
	depth    int
	abort    bool // step or depth limit reached, or ctx done
	bad      any  // first instance value of an unsupported Go type
	useScope bool

	// keep is how many failures are recorded in full; past it, omitted
	// counts them and omittedKw holds their keywords (omittedSet as a
	// set), in order of first appearance.
	keep       int
	omitted    int
	omittedKw  []kwID
	omittedSet uint64

	nodes         []*node // the schema's, by id
	passed, total int
	fails         []failRec
	lists         [][]string   // the name lists of failures and described locations
	pend          []pendingVal // object()'s values waiting for its ordered pass, a stack
	spans         []spans
	memo          [memoSize]int32 // recently formatted failures (indices into fails), -1 = none
	memoNext      int
	buf           []byte
	described     []descRec
	decls         []declRec
	scope         []*resource
	gen           uint64   // bumped by every rollback of buf
	annots        []*annot // free list
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
// buf, built once for all its children) and its own segment (an array
// index, or a key copied into buf): building each location's whole path
// cost a copy of the parent's per described object, and the path is only
// needed to tell locations apart when several applicators described the
// same one, or to report undeclared keys.
type descRec struct {
	pp0, pp1   int32 // the parent's instance path in buf
	idx        int32 // the array index, or negative for a key
	s0, s1     int32 // else the key's segment in buf (empty at the root)
	undeclared int32 // the undeclared keys: an index into lists, or -1
}

// appendDescPath appends d's RFC 6901 instance path to b.
func (e *evaluator) appendDescPath(b []byte, d *descRec) []byte {
	b = append(b, e.buf[d.pp0:d.pp1]...)
	if d.idx >= 0 {
		return appendSegment(b, "", int(d.idx))
	}
	return append(b, e.buf[d.s0:d.s1]...)
}

// failRec is a recorded failure. The schema node and the names are held
// as indices, so that the value is its only pointer: while the collector
// marks, every pointer stored into the pooled evaluator goes through the
// write barrier, and one evaluation may record thousands of failures.
type failRec struct {
	kw     kwID  // reported keyword
	at     kwID  // keyword whose location is reported (kwSelf = the schema itself)
	node   int32 // id
	names  int32 // an index into lists, or -1
	v      any
	p0, p1 int // instance path in buf
	a, b   int
	report int32 // set by result: the index of the failure's Report
}

// list records names in lists and returns its index, or -1 for none.
func (e *evaluator) list(names []string) int32 {
	if names == nil {
		return -1
	}
	e.lists = append(e.lists, names)
	return int32(len(e.lists) - 1)
}

// listAt is the names recorded at index i (nil for -1).
func (e *evaluator) listAt(i int32) []string {
	if i < 0 {
		return nil
	}
	return e.lists[i]
}

// mark is a restore point for branches whose outcome is discarded.
type mark struct {
	passed, total, fails, buf, described, decls, lists int
	omitted, omittedKw                                 int
}

func (e *evaluator) mark() mark {
	return mark{e.passed, e.total, len(e.fails), len(e.buf), len(e.described), len(e.decls), len(e.lists), e.omitted, len(e.omittedKw)}
}

func (e *evaluator) rollback(m mark) {
	e.gen++ // cached paths may lie in the discarded part of buf
	e.passed, e.total = m.passed, m.total
	// The discarded records are cleared, not only cut off: release clears
	// up to the lengths, and what lies past them must hold no instance.
	clear(e.fails[m.fails:])
	e.fails = e.fails[:m.fails]
	e.buf = e.buf[:m.buf]
	e.described = e.described[:m.described]
	e.decls = e.decls[:m.decls]
	clear(e.lists[m.lists:])
	e.lists = e.lists[:m.lists]
	if e.omitted != m.omitted {
		e.omitted = m.omitted
		e.omittedKw = e.omittedKw[:m.omittedKw]
		e.omittedSet = 0
		for _, kw := range e.omittedKw {
			e.omittedSet |= 1 << kw
		}
	}
}

func (e *evaluator) reset(s *Schema) {
	e.Budget = NewBudget(nil, s.maxSteps)
	e.depth, e.abort, e.bad = 0, false, nil
	e.keep, e.omitted, e.omittedKw, e.omittedSet = math.MaxInt, 0, e.omittedKw[:0], 0
	e.useScope = s.useScope
	e.nodes = s.nodes
	e.passed, e.total = 0, 0
	e.fails = e.fails[:0]
	e.lists = e.lists[:0]
	e.pend = e.pend[:0]
	e.buf = e.buf[:0]
	e.described = e.described[:0]
	e.decls = e.decls[:0]
	e.scope = e.scope[:0]
}

// release drops references into the instance before pooling.
func (e *evaluator) release() {
	clear(e.fails)
	clear(e.lists)
	clear(e.pend[:cap(e.pend)]) // popPending leaves values past the length
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

// fail counts a failed check and records it (past keep, only counts it).
func (e *evaluator) fail(count bool, kw, at kwID, n *node, v any, f *frame, a, b int, names []string) {
	if !count {
		return
	}
	e.total++
	if len(e.fails) >= e.keep {
		e.omit(kw)
		return
	}
	p0, p1 := e.path(f)
	e.record(kw, at, n, v, p0, p1, a, b, names)
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
	if e.omittedSet&(1<<kw) == 0 {
		e.omittedSet |= 1 << kw
		e.omittedKw = append(e.omittedKw, kw)
	}
}

// record appends a failure whose path is buf[p0:p1].
func (e *evaluator) record(kw, at kwID, n *node, v any, p0, p1, a, b int, names []string) {
	// Field by field into a grown slot: appending a whole failRec is a
	// typed copy that, while the collector marks, goes through its bulk
	// barrier. Every field is written, so a slot left by a rollback holds
	// nothing stale.
	if len(e.fails) == cap(e.fails) {
		e.fails = slices.Grow(e.fails, 1)
	}
	e.fails = e.fails[:len(e.fails)+1]
	r := &e.fails[len(e.fails)-1]
	r.kw, r.at, r.node, r.names, r.v, r.p0, r.p1, r.a, r.b = kw, at, n.id, e.list(names), v, p0, p1, a, b
}

// path returns the span of buf holding the RFC 6901 pointer of location f,
// building it on first use.
func (e *evaluator) path(f *frame) (int, int) {
	if f == nil || f.parent == nil {
		return 0, 0
	}
	if f.pgen == e.gen+1 {
		return int(f.p0), int(f.p1)
	}
	p0 := len(e.buf)
	e.buildPath(f, int32(p0))
	return p0, len(e.buf)
}

// childPath is path for the child of pf at key (or index idx) without a
// frame of its own: pf's pointer, extended in place when it ends buf (as
// when path just built it) or else copied, and the child's segment.
func (e *evaluator) childPath(pf *frame, key string, idx int) (int, int) {
	p0, p1 := e.path(pf)
	if p1 != len(e.buf) {
		k := len(e.buf)
		e.putBuf(int32(p0), int32(p1))
		p0 = k
	}
	e.putSegment(key, idx)
	return p0, len(e.buf)
}

// buildPath appends the pointer of location f to buf, which holds nothing
// after p0: the nearest ancestor whose pointer was built is copied once and
// the segments below it appended, each location on the way getting its
// own pointer as a prefix of f's.
func (e *evaluator) buildPath(f *frame, p0 int32) {
	if f.parent == nil {
		return
	}
	if f.pgen == e.gen+1 {
		e.putBuf(f.p0, f.p1)
		return
	}
	e.buildPath(f.parent, p0)
	e.putSegment(f.key, f.idx)
	f.p0, f.p1, f.pgen = p0, int32(len(e.buf)), e.gen+1
}

// room makes room in buf for k more bytes. The put methods then append by
// reslicing buf within its capacity, which stores only its length:
// assigning what append returns stores the pointer too, and while the
// collector marks, every pointer store to the pooled evaluator goes
// through the write barrier. A failure's path is built of several appends.
func (e *evaluator) room(k int) {
	if cap(e.buf)-len(e.buf) < k {
		e.buf = slices.Grow(e.buf, k)
	}
}

// putBuf appends buf[i:j] to buf.
func (e *evaluator) putBuf(i, j int32) {
	e.room(int(j - i))
	n := len(e.buf)
	e.buf = e.buf[:n+int(j-i)]
	copy(e.buf[n:], e.buf[i:j])
}

// putSegment appends the pointer segment of an array index (idx >= 0) or
// an object key: appendSegment into buf.
func (e *evaluator) putSegment(key string, idx int) {
	if idx >= 0 && idx < 100 || idx == plainKey {
		e.room(1 + max(len(key), 2))
		n := len(e.buf)
		switch {
		case idx == plainKey:
			e.buf = e.buf[:n+1+len(key)]
			e.buf[n] = '/'
			copy(e.buf[n+1:], key)
		case idx < 10:
			e.buf = e.buf[:n+2]
			e.buf[n], e.buf[n+1] = '/', byte('0'+idx)
		default:
			e.buf = e.buf[:n+3]
			e.buf[n], e.buf[n+1], e.buf[n+2] = '/', byte('0'+idx/10), byte('0'+idx%10)
		}
		return
	}
	e.buf = appendSegment(e.buf, key, idx)
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
		return appendInt(b, idx)
	}
	if idx == plainKey || keySegment(key) == plainKey {
		return append(b, key...)
	}
	for j := 0; j < len(key); j++ {
		switch c := key[j]; c {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendInt(b []byte, i int) []byte {
	if i < 10 {
		return append(b, byte('0'+i))
	}
	if i < 100 {
		return append(b, byte('0'+i/10), byte('0'+i%10))
	}
	var tmp [20]byte
	p := len(tmp)
	for i > 0 {
		p--
		tmp[p] = byte('0' + i%10)
		i /= 10
	}
	return append(b, tmp[p:]...)
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
		e.fail(count, kwFalse, kwSelf, n, v, f, 0, 0, nil)
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
		local := e.newAnnot()
		ok = e.body(n, v, f, count, local)
		if ok && ann != nil {
			ann.merge(local)
		}
		e.freeAnnot(local)
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
	if n.ref != nil && !e.eval(n.ref, v, f, count, ann) {
		if !count {
			return false
		}
		valid = false
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
		if !e.eval(t, v, f, count, ann) {
			if !count {
				return false
			}
			valid = false
		}
	}
	if !e.value(n, v, f, count) {
		if !count {
			return false
		}
		valid = false
	}
	if n.inPlace && !e.inPlace(n, v, f, count, ann) {
		if !count {
			return false
		}
		valid = false
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
	var num number
	isNum := false
	switch x := v.(type) {
	case string, map[string]any, []any, bool, nil:
	case json.Number:
		if num, isNum = parseNumber(string(x)); !isNum {
			e.bad = v
			return false
		}
	default:
		if num, isNum = numberOf(v); !isNum {
			e.bad = v
			return false
		}
	}
	valid := true
	if n.types != 0 {
		if typeMatches(n.types, v, isNum && num.isInt()) {
			e.pass(count)
		} else {
			e.fail(count, kwType, kwType, n, v, f, 0, 0, nil)
			if !count {
				return false
			}
			valid = false
		}
	}
	if n.enum != nil {
		if n.enum.has(v, &num, isNum) {
			e.pass(count)
		} else {
			e.fail(count, kwEnum, kwEnum, n, v, f, 0, 0, nil)
			if !count {
				return false
			}
			valid = false
		}
	}
	if n.hasConst {
		if jsonEqual(n.constVal, v) {
			e.pass(count)
		} else {
			e.fail(count, kwConst, kwConst, n, v, f, 0, 0, nil)
			if !count {
				return false
			}
			valid = false
		}
	}
	if x, ok := v.(string); ok && n.anyStr && !e.str(n, x, f, count) {
		if !count {
			return false
		}
		valid = false
	}
	if isNum && n.anyNum && !e.num(n, &num, v, f, count) {
		valid = false
	}
	return valid
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

func (e *evaluator) num(n *node, x *number, v any, f *frame, count bool) bool {
	valid := true
	check := func(ok bool, kw kwID) bool {
		if ok {
			e.pass(count)
			return true
		}
		e.fail(count, kw, kw, n, v, f, 0, 0, nil)
		valid = false
		return count
	}
	if n.multipleOf != nil && !check(isMultiple(*x, n.multipleOf.n), kwMultipleOf) {
		return false
	}
	if n.minimum != nil && !check(cmpNumber(*x, n.minimum.n) >= 0, kwMinimum) {
		return false
	}
	if n.maximum != nil && !check(cmpNumber(*x, n.maximum.n) <= 0, kwMaximum) {
		return false
	}
	if n.exclMin != nil && !check(cmpNumber(*x, n.exclMin.n) > 0, kwExclusiveMinimum) {
		return false
	}
	if n.exclMax != nil && !check(cmpNumber(*x, n.exclMax.n) < 0, kwExclusiveMaximum) {
		return false
	}
	return valid
}

func (e *evaluator) str(n *node, s string, f *frame, count bool) bool {
	valid := true
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := runeCount(s)
		if n.minLength >= 0 {
			if l >= n.minLength {
				e.pass(count)
			} else {
				e.fail(count, kwMinLength, kwMinLength, n, s, f, l, 0, nil)
				if !count {
					return false
				}
				valid = false
			}
		}
		if n.maxLength >= 0 {
			if l <= n.maxLength {
				e.pass(count)
			} else {
				e.fail(count, kwMaxLength, kwMaxLength, n, s, f, l, 0, nil)
				if !count {
					return false
				}
				valid = false
			}
		}
	}
	if n.pattern != nil {
		if n.pattern.match(s) {
			e.pass(count)
		} else {
			e.fail(count, kwPattern, kwPattern, n, s, f, 0, 0, nil)
			if !count {
				return false
			}
			valid = false
		}
	}
	if n.formatAssert {
		if formatValid(n.format, s) {
			e.pass(count)
		} else {
			e.fail(count, kwFormat, kwFormat, n, s, f, 0, 0, nil)
			valid = false
		}
	}
	return valid
}

// runeCount counts code points (ASCII fast path).
func runeCount(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return i + countRunes(s[i:])
		}
	}
	return len(s)
}

// inPlace evaluates the applicators that apply to the same location.
func (e *evaluator) inPlace(n *node, v any, f *frame, count bool, ann *annot) bool {
	valid := true
	for _, s := range n.allOf {
		if !e.eval(s, v, f, count, ann) {
			if !count {
				return false
			}
			valid = false
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
		if matched > 0 {
			e.pass(count)
		} else {
			e.fail(count, kwAnyOf, kwAnyOf, n, v, f, len(n.anyOf), 0, nil)
			if !count {
				return false
			}
			valid = false
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
		if first >= 0 && second < 0 {
			e.pass(count)
		} else {
			e.fail(count, kwOneOf, kwOneOf, n, v, f, first, second, nil)
			if !count {
				return false
			}
			valid = false
		}
	}
	if n.not != nil {
		m := e.mark()
		matched := e.eval(n.not, v, f, false, nil)
		e.rollback(m)
		if !matched {
			e.pass(count)
		} else {
			e.fail(count, kwNot, kwNot, n, v, f, 0, 0, nil)
			if !count {
				return false
			}
			valid = false
		}
	}
	if n.ifN != nil {
		cond := e.branch(n.ifN, v, f, ann)
		e.pass(count) // the condition selects a branch; it never fails
		next := n.elseN
		if cond {
			next = n.thenN
		}
		if next != nil && !e.eval(next, v, f, count, ann) {
			if !count {
				return false
			}
			valid = false
		}
	}
	if n.depSchemas != nil {
		if obj, ok := v.(map[string]any); ok {
			for _, d := range n.depSchemas {
				if _, has := obj[d.prop]; !has {
					continue
				}
				if !e.eval(d.n, v, f, count, ann) {
					if !count {
						return false
					}
					valid = false
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
		ba = e.newAnnot()
	}
	ok := e.eval(s, v, f, false, ba)
	if !ok {
		e.rollback(m)
	} else if ba != nil {
		ann.merge(ba)
	}
	if ba != nil {
		e.freeAnnot(ba)
	}
	return ok
}

// child applies n to the child value v of the location pf.
func (e *evaluator) child(n *node, v any, pf *frame, key string, idx int, count bool) bool {
	if n.boolean > 0 {
		return true
	}
	if n.leaf && e.leaf(n, v, count) {
		return true
	}
	return e.childSlow(n, v, pf, key, idx, count)
}

// childSlow is child without the leaf fast path (the caller tried it).
func (e *evaluator) childSlow(n *node, v any, pf *frame, key string, idx int, count bool) bool {
	if n.leaf {
		return e.leafSlow(n, v, pf, key, idx, count)
	}
	f := frame{parent: pf, key: key, idx: idx, declStart: len(e.decls), dStart: len(e.described)}
	var ok bool
	if obj, isObj := v.(map[string]any); isObj && !e.useScope {
		t := n
		for t.pureRef {
			t = t.ref
		}
		if t.plainObject {
			ok = e.plainObject(t, obj, &f, count)
		} else {
			ok = e.eval(n, v, &f, count, nil)
		}
	} else {
		ok = e.eval(n, v, &f, count, nil)
	}
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

// plainObject is eval of a plainObject node on an object, when the dynamic
// scope is not in use: eval, body and value reduced to what they do there —
// the same step charged and limits checked, the type, then object.
func (e *evaluator) plainObject(n *node, obj map[string]any, f *frame, count bool) bool {
	if !e.enter() {
		return false
	}
	valid := true
	if n.types != 0 {
		if n.types&typeObject != 0 {
			e.pass(count)
		} else {
			e.fail(count, kwType, kwType, n, obj, f, 0, 0, nil)
			valid = false
		}
	}
	if (valid || count) && n.anyObj && !e.object(n, obj, f, count, nil) {
		valid = false
	}
	e.depth--
	return valid
}

// leafSlow evaluates a leaf (assertions on the value only) that failed the
// fast path, recording what failed: eval and body reduced to what they do
// for a leaf — the same steps charged and limits checked, then value. A
// leaf declares no properties and descends nowhere, so its location has
// nothing to finish, and it consults no dynamic scope.
func (e *evaluator) leafSlow(n *node, v any, pf *frame, key string, idx int, count bool) bool {
	e.steps++
	if e.depth+1 > maxEvalDepth || e.over() {
		e.abort = true
		return false
	}
	f := frame{parent: pf, key: key, idx: idx}
	return e.value(n, v, &f, count)
}

// leafNumberFailed is leafSlow for a counted number v, a valid literal, at
// a leaf whose checks leafNumber ran: held held and those in failed failed.
// It charges the same steps and records the same failures, without
// evaluating again.
func (e *evaluator) leafNumberFailed(n *node, v any, pf *frame, key string, idx int, held int, failed uint8) {
	e.steps += 1 + numSteps(n, v.(json.Number))
	if e.depth+1 > maxEvalDepth || e.over() {
		e.abort = true
		return
	}
	e.total += held
	e.passed += held
	p0, p1 := 0, 0
	if len(e.fails) < e.keep {
		p0, p1 = e.childPath(pf, key, idx)
	}
	for m := failed; m != 0; m &= m - 1 {
		kw := numChecks[bits.TrailingZeros8(m)]
		e.total++
		if len(e.fails) >= e.keep {
			e.omit(kw)
			continue
		}
		e.record(kw, kw, n, v, p0, p1, 0, 0, nil)
	}
}
