package schema

import (
	"encoding/json"
	"sync/atomic"
	"unsafe"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
)

// Size is about the bytes of heap the compiled schema holds (an upper
// bound, within a small factor): its nodes with what they keep of the
// document (names, enum and const values, locations), and its compiled
// patterns at ecmaregex.InstBytes per unit of their size. A cache of
// compiled schemas accounts its entries by it.
func (s *Schema) Size() int64 { return s.size }

// CompileSteps is the steps CompileWith charged for compiling the schema's
// patterns: a step per unit of their size (ecmaregex.Program.Size). A
// caller that reuses a compiled schema charges them again, so that a
// request costs the same steps whether or not its schema was cached.
func (s *Schema) CompileSteps() int { return s.patternSize }

// compiledUnits counts the pattern size units compiled by this process.
var compiledUnits atomic.Int64

// CompiledPatternUnits is the size (ecmaregex.Program.Size units) of every
// pattern program this process has compiled: for metrics, and for tests
// that a path compiles no pattern (Check compiles none).
func CompiledPatternUnits() int64 { return compiledUnits.Load() }

// Overheads of the heap accounting: a slice element or map entry of the
// compiled nodes, and an allocation's header and rounding.
const (
	entryBytes = 48
	allocBytes = 32
)

// heapSize computes Size.
func (s *Schema) heapSize() int64 {
	n := int64(unsafe.Sizeof(*s)) + int64(ecmaregex.InstBytes*s.patternSize)
	for _, nd := range s.nodes {
		n += int64(unsafe.Sizeof(*nd)) + allocBytes + 8 + int64(len(nd.loc))
		n += int64(len(nd.kwLocs)) * (int64(unsafe.Sizeof(kwLoc{})) + allocBytes)
		for _, kl := range nd.kwLocs {
			n += int64(len(kl.loc))
		}
		n += int64(len(nd.props)+len(nd.propMap)+len(nd.required)+len(nd.patProps)+len(nd.depRequired)+
			len(nd.depSchemas)+len(nd.prefix)+len(nd.allOf)+len(nd.anyOf)+len(nd.oneOf)) * entryBytes
		for _, p := range nd.props {
			n += 2 * int64(len(p.name)) // in props and propMap
		}
		for _, r := range nd.required {
			n += int64(len(r))
		}
		for _, d := range nd.depRequired {
			n += int64(len(d.prop))
			for _, r := range d.required {
				n += entryBytes + int64(len(r))
			}
		}
		for _, kw := range []*numKw{nd.multipleOf, nd.minimum, nd.maximum, nd.exclMin, nd.exclMax} {
			if kw != nil {
				n += int64(unsafe.Sizeof(*kw)) + allocBytes + int64(len(kw.lit)) + int64(len(kw.n.digits))
			}
		}
		if nd.hasConst {
			n += valueBytes(nd.constVal)
		}
		if e := nd.enum; e != nil {
			n += int64(unsafe.Sizeof(*e)) + allocBytes
			for _, v := range e.vals {
				n += 2*entryBytes + valueBytes(v) // in vals and in strs, nums or others
			}
			if e.index != nil {
				n += int64(len(e.vals)) * 2 * entryBytes
			}
		}
	}
	return n
}

// valueBytes is about the heap a decoded JSON value holds.
func valueBytes(v any) int64 {
	switch x := v.(type) {
	case map[string]any:
		n := int64(allocBytes + 48)
		for k, c := range x {
			n += 2*entryBytes + int64(len(k)) + valueBytes(c)
		}
		return n
	case []any:
		n := int64(allocBytes + 24)
		for _, c := range x {
			n += entryBytes + valueBytes(c)
		}
		return n
	case string:
		return allocBytes + int64(len(x))
	case json.Number:
		return allocBytes + int64(len(x))
	}
	return entryBytes
}
