package schema

import "hash/maphash"

// enumIndexMin is the enum size from which membership is looked up by hash
// instead of by a scan. A scan costs the enum's size for every value
// checked: a 50,000-member enum applied to each item of a large array took
// minutes, far past any request deadline.
const enumIndexMin = 32

// enumIndex maps the hash of every enum member to its positions in the
// enum. It hashes with hashJSON, which gives equal JSON values (1, 1.0 and
// 1e0; objects in any key order) the same hash, so a lookup only compares
// the few members that share the value's hash.
type enumIndex struct {
	seed maphash.Seed
	at   map[uint64][]int32
}

func newEnumIndex(vals []any) *enumIndex {
	x := &enumIndex{seed: maphash.MakeSeed(), at: make(map[uint64][]int32, len(vals))}
	for i, v := range vals {
		h := x.hash(v)
		x.at[h] = append(x.at[h], int32(i))
	}
	return x
}

func (x *enumIndex) hash(v any) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	hashJSON(&h, v)
	return h.Sum64()
}

// has reports whether a member of vals equals v.
func (x *enumIndex) has(vals []any, v any) bool {
	for _, i := range x.at[x.hash(v)] {
		if jsonEqual(vals[i], v) {
			return true
		}
	}
	return false
}
