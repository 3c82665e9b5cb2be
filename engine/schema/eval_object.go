package schema

import (
	"slices"
)

// annot collects, for one location, what unevaluatedProperties and
// unevaluatedItems must skip: the properties and items that adjacent
// keywords and successful in-place subschemas evaluated.
type annot struct {
	props    map[string]struct{}
	allProps bool
	items    int // items [0, items) evaluated
	allItems bool
	idx      map[int]struct{} // items matched by contains
}

func (a *annot) addProp(k string) {
	if a.allProps {
		return
	}
	if a.props == nil {
		a.props = map[string]struct{}{}
	}
	a.props[k] = struct{}{}
}

func (a *annot) hasProp(k string) bool {
	if a.allProps {
		return true
	}
	_, ok := a.props[k]
	return ok
}

func (a *annot) addIdx(i int) {
	if a.idx == nil {
		a.idx = map[int]struct{}{}
	}
	a.idx[i] = struct{}{}
}

func (a *annot) hasItem(i int) bool {
	if a.allItems || i < a.items {
		return true
	}
	_, ok := a.idx[i]
	return ok
}

func (a *annot) merge(b *annot) {
	a.allProps = a.allProps || b.allProps
	if !a.allProps {
		for k := range b.props {
			a.addProp(k)
		}
	}
	a.allItems = a.allItems || b.allItems
	a.items = max(a.items, b.items)
	for i := range b.idx {
		a.addIdx(i)
	}
}

// eachKey applies visit to every key of obj at location f and reports
// whether every application held; without count it stops at the first that
// did not. The keys come in Go's random map order: when they recorded
// several failures or described objects, they are applied again in sorted
// order so the output is deterministic. visit reports whether the key's
// application held and whether it entered the key's value.
func (e *evaluator) eachKey(obj map[string]any, f *frame, count bool, visit func(k string, v any) (ok, entered bool)) bool {
	m := e.mark()
	valid, entered := true, false
	for k, v := range obj {
		ok, in := visit(k, v)
		entered = entered || in
		if !ok {
			if !count {
				return false
			}
			valid = false
		}
	}
	if !e.abort && (len(e.fails)+e.omitted-m.fails-m.omitted > 1 || len(e.described)-m.described > 1) {
		e.rollback(m)
		for _, k := range sortedKeys(obj) {
			visit(k, obj[k])
		}
	}
	if entered {
		f.descents++
	}
	return valid
}

// pending is the value of the object's key props[i] waiting for object's
// ordered pass.
type pending struct {
	v any
	i int32
}

func (e *evaluator) object(n *node, obj map[string]any, f *frame, count bool, ann *annot) bool {
	valid := true
	goOn := func(ok bool) bool { // as in body
		valid = valid && ok
		return ok || count
	}
	check := func(ok bool, kw, at kwID, names []string) bool {
		if ok {
			e.pass(count)
		} else {
			e.fail(count, f, failure{kw: kw, at: at, node: n.id, v: obj, names: names})
		}
		return goOn(ok)
	}
	if n.minProps >= 0 && !check(len(obj) >= n.minProps, kwMinProperties, kwSelf, nil) {
		return false
	}
	if n.maxProps >= 0 && !check(len(obj) <= n.maxProps, kwMaxProperties, kwSelf, nil) {
		return false
	}
	// Every name of properties is looked up once; the values wait on
	// e.pend for the ordered pass after required, so that failures are
	// recorded in keyword order. e.pend is
	// a stack shared by the nested objects; what is left past its length,
	// release clears.
	base := len(e.pend)
	defer func() { e.pend = e.pend[:base] }()
	present, reqPresent := 0, 0
	for i := range n.props {
		p := &n.props[i]
		v, has := obj[p.name]
		if !has {
			continue
		}
		present++
		if p.required {
			reqPresent++
		}
		if ann != nil {
			ann.addProp(p.name)
		}
		e.pend = append(e.pend, pending{v: v, i: int32(i)})
	}
	if n.hasRequired {
		ok := true
		if n.reqProps >= 0 {
			ok = reqPresent == n.reqProps
		} else {
			for _, r := range n.required {
				if _, has := obj[r]; !has {
					ok = false
					break
				}
			}
		}
		var missing []string
		if !ok && e.recording(count) {
			missing = missingOf(obj, n.required)
		}
		if !check(ok, kwRequired, kwSelf, missing) {
			return false
		}
	}
	if n.depRequired != nil {
		ok := true
		var missing []string
		for _, d := range n.depRequired {
			if _, has := obj[d.prop]; !has {
				continue
			}
			for _, r := range d.required {
				if _, has := obj[r]; !has {
					ok = false
					if e.recording(count) {
						missing = append(missing, r+" (required by "+d.prop+")")
					}
				}
			}
		}
		if !check(ok, n.depRequiredKw, kwSelf, missing) {
			return false
		}
	}
	for k, end := base, len(e.pend); k < end; k++ {
		d := e.pend[k] // a copy: the evaluation below pushes on e.pend
		p := &n.props[d.i]
		if !goOn(e.descend(p.n, d.v, f, p.name, p.seg, count)) {
			return false
		}
	}
	if present > 0 {
		f.descents++
	}
	if n.patProps != nil && !goOn(e.eachKey(obj, f, count, func(k string, v any) (bool, bool) {
		return e.patternKey(n, k, v, f, count, ann)
	})) {
		return false
	}
	if n.props != nil || n.patProps != nil {
		e.decls = append(e.decls, declRec{node: n.id, present: int32(present), props: n.props != nil, patProps: n.patProps != nil})
	}
	if n.addlFalse {
		ok := present == len(obj)
		if !ok && n.patProps != nil {
			ok = true
			for k := range obj {
				if !n.declares(k) {
					ok = false
					break
				}
			}
		}
		var extra []string
		if !ok && e.recording(count) {
			extra = undeclaredOf(obj, n)
		}
		if !check(ok, kwFalse, kwAdditionalProperties, extra) {
			return false
		}
		if ann != nil {
			ann.allProps = true
		}
	} else if n.addl != nil {
		if !goOn(e.eachKey(obj, f, count, func(k string, v any) (bool, bool) {
			if n.declares(k) {
				return true, false
			}
			return e.descend(n.addl, v, f, k, -1, count), true
		})) {
			return false
		}
		if ann != nil {
			ann.allProps = true
		}
	}
	if n.propNames != nil {
		var bad []string
		for k := range obj {
			m := e.mark()
			ok := e.descend(n.propNames, k, f, k, -1, false)
			e.rollback(m)
			if !ok {
				if !count {
					return false
				}
				bad = append(bad, k)
			}
		}
		slices.Sort(bad)
		if !check(bad == nil, kwPropertyNames, kwSelf, bad) {
			return false
		}
	}
	if n.unevalPropsFalse || n.unevalProps != nil {
		if !e.unevaluatedProps(n, obj, f, count, ann) {
			return false
		}
	}
	return valid
}

func (e *evaluator) unevaluatedProps(n *node, obj map[string]any, f *frame, count bool, ann *annot) bool {
	valid := true
	if n.unevalPropsFalse {
		var rest []string
		for k := range obj {
			if !ann.hasProp(k) {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		if rest == nil {
			e.pass(count)
		} else {
			e.fail(count, f, failure{kw: kwFalse, at: kwUnevaluatedProperties, node: n.id, v: obj, names: rest})
			valid = false
		}
	} else if !e.eachKey(obj, f, count, func(k string, v any) (bool, bool) {
		if ann.hasProp(k) {
			return true, false
		}
		return e.descend(n.unevalProps, v, f, k, -1, count), true
	}) {
		if !count {
			return false
		}
		valid = false
	}
	ann.allProps = true
	return valid
}

// patternKey applies every matching patternProperties schema to one key.
func (e *evaluator) patternKey(n *node, k string, cv any, f *frame, count bool, ann *annot) (valid, entered bool) {
	valid = true
	for i := range n.patProps { // every pattern runs on every key
		e.steps += 1 + matchSteps(len(k), n.patProps[i].p.size)
	}
	if e.over() {
		return false, false
	}
	for i := range n.patProps {
		p := &n.patProps[i]
		if !p.p.match(k) {
			continue
		}
		entered = true
		if ann != nil {
			ann.addProp(k)
		}
		if !e.descend(p.n, cv, f, k, -1, count) {
			valid = false
			if !count {
				return
			}
		}
	}
	return
}

func missingOf(obj map[string]any, names []string) []string {
	var out []string
	for _, r := range names {
		if _, has := obj[r]; !has {
			out = append(out, r)
		}
	}
	return out
}

func undeclaredOf(obj map[string]any, n *node) []string {
	var out []string
	for k := range obj {
		if !n.declares(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (e *evaluator) array(n *node, arr []any, f *frame, count bool, ann *annot) bool {
	valid := true
	goOn := func(ok bool) bool { // as in body
		valid = valid && ok
		return ok || count
	}
	check := func(ok bool, kw, at kwID, a, b int) bool {
		if ok {
			e.pass(count)
		} else {
			e.fail(count, f, failure{kw: kw, at: at, node: n.id, v: arr, a: a, b: b})
		}
		return goOn(ok)
	}
	if n.minItems >= 0 && !check(len(arr) >= n.minItems, kwMinItems, kwMinItems, 0, 0) {
		return false
	}
	if n.maxItems >= 0 && !check(len(arr) <= n.maxItems, kwMaxItems, kwMaxItems, 0, 0) {
		return false
	}
	if n.uniqueItems {
		if e.steps += len(arr); e.over() { // every item is hashed
			return false
		}
		i, j := firstDuplicate(arr)
		if !check(i < 0, kwUniqueItems, kwUniqueItems, i, j) {
			return false
		}
	}
	np := min(len(n.prefix), len(arr))
	for i := 0; i < np; i++ {
		if !goOn(e.descend(n.prefix[i], arr[i], f, "", i, count)) {
			return false
		}
	}
	if np > 0 {
		f.descents++
		if ann != nil {
			ann.items = max(ann.items, np)
		}
	}
	if n.items != nil && len(arr) > len(n.prefix) {
		for i := len(n.prefix); i < len(arr); i++ {
			if !goOn(e.descend(n.items, arr[i], f, "", i, count)) {
				return false
			}
		}
		f.descents++
		if ann != nil {
			ann.allItems = true
		}
	}
	if n.itemsFalse && !check(len(arr) <= len(n.prefix), kwFalse, n.itemsKw, len(n.prefix), 0) {
		return false
	}
	if n.contains != nil && !goOn(e.containsCheck(n, arr, f, count, ann)) {
		return false
	}
	if n.unevalItemsFalse || n.unevalItems != nil {
		first := -1
		for i := range arr {
			if !ann.hasItem(i) {
				first = i
				break
			}
		}
		if n.unevalItemsFalse {
			if !check(first < 0, kwFalse, kwUnevaluatedItems, first, 0) {
				return false
			}
		} else if first >= 0 {
			for i := first; i < len(arr); i++ {
				if ann.hasItem(i) {
					continue
				}
				if !goOn(e.descend(n.unevalItems, arr[i], f, "", i, count)) {
					return false
				}
			}
			f.descents++
		}
		ann.allItems = true
	}
	return valid
}

func (e *evaluator) containsCheck(n *node, arr []any, f *frame, count bool, ann *annot) bool {
	least := 1
	kw := kwContains
	if n.minContains >= 0 {
		least, kw = n.minContains, kwMinContains
	}
	matches := 0
	for i, it := range arr {
		m := e.mark()
		if e.descend(n.contains, it, f, "", i, false) {
			matches++
			if ann != nil {
				ann.addIdx(i)
			}
			if !count && ann == nil && n.maxContains < 0 && matches >= least {
				break
			}
		} else {
			e.rollback(m)
		}
	}
	if matches > 0 {
		f.descents++
	}
	valid := true
	if matches >= least {
		e.pass(count)
	} else {
		e.fail(count, f, failure{kw: kw, node: n.id, v: arr, a: matches, b: least})
		if !count {
			return false
		}
		valid = false
	}
	if n.maxContains >= 0 {
		if matches <= n.maxContains {
			e.pass(count)
		} else {
			e.fail(count, f, failure{kw: kwMaxContains, node: n.id, v: arr, a: matches})
			valid = false
		}
	}
	return valid
}

// finishFrame records the Described entry of a location when a subschema
// with properties applied there, and merges duplicate entries that arise
// when several subschemas descend into the same child.
func (e *evaluator) finishFrame(f *frame, v any) {
	if f.descents > 1 && len(e.described)-f.dStart > 1 {
		e.dedupe(f.dStart)
	}
	if len(e.decls) <= f.declStart {
		return
	}
	decls := e.decls[f.declStart:]
	obj, _ := v.(map[string]any)
	described := false
	for _, d := range decls {
		if d.props {
			described = true
			break
		}
	}
	if described && obj != nil {
		var und []string
		if len(decls) != 1 || decls[0].patProps || int(decls[0].present) != len(obj) {
			// Every key is looked up in every subschema applied here: a
			// step per key and per four lookups, so that many subschemas
			// over an object of many keys run out of steps, or stop at the
			// deadline, instead of running unbounded.
			perKey := 1 + len(decls)/4
			for k := range obj {
				if e.steps += perKey; e.over() {
					break
				}
				declared := false
				for _, d := range decls {
					if e.nodes[d.node].declares(k) {
						declared = true
						break
					}
				}
				if !declared {
					und = append(und, k)
				}
			}
			slices.Sort(und)
		}
		d := descRec{idx: int32(f.idx), undeclared: und}
		if f.parent != nil {
			d.pp0, d.pp1 = e.path(f.parent)
			if f.idx < 0 {
				// A key is copied into buf, not kept as f.key: storing a
				// frame's content would move every frame to the heap.
				d.s0 = int32(len(e.buf))
				e.buf = appendSegment(e.buf, f.key, f.idx)
				d.s1 = int32(len(e.buf))
			}
		}
		e.described = append(e.described, d)
	}
	e.decls = e.decls[:f.declStart]
}

// dedupe merges described entries from start on that share a path: a key
// is undeclared only if every subschema there left it undeclared.
func (e *evaluator) dedupe(start int) {
	seen := map[string]int{}
	out := e.described[:start]
	var scratch []byte
	for _, d := range e.described[start:] {
		scratch = e.appendDescPath(scratch[:0], &d)
		p := string(scratch)
		if i, ok := seen[p]; ok {
			out[i].undeclared = intersect(out[i].undeclared, d.undeclared)
			continue
		}
		seen[p] = len(out)
		out = append(out, d)
	}
	clear(e.described[len(out):])
	e.described = out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			out = append(out, x)
		}
	}
	return out
}
