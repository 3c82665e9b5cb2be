package schema

import (
	"encoding/json"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
)

// type bits for the type keyword; integer is a refinement of number.
const (
	typeNull uint8 = 1 << iota
	typeBool
	typeNumber
	typeInteger
	typeString
	typeArray
	typeObject
)

var typeNames = [...]struct {
	bit  uint8
	name string
}{
	{typeArray, "array"}, {typeBool, "boolean"}, {typeInteger, "integer"}, {typeNull, "null"},
	{typeNumber, "number"}, {typeObject, "object"}, {typeString, "string"},
}

func typeBit(name string) uint8 {
	for _, t := range typeNames {
		if t.name == name {
			return t.bit
		}
	}
	return 0
}

// typeOf is the type bit of a decoded value's JSON type (typeNumber for
// every number), or 0 for a Go type no JSON value decodes to.
func typeOf(v any) uint8 {
	switch v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBool
	case json.Number, float64:
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return 0
}

// typeName names the JSON type of a type bit from typeOf.
func typeName(t uint8) string {
	for _, n := range typeNames {
		if n.bit == t {
			return n.name
		}
	}
	return "unsupported value"
}

// jsonEqual is JSON equality: numbers compare by value (1 == 1.0), objects
// ignore key order.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil, bool, string:
		return a == b // false when b's dynamic type differs; never a panic, a's type is comparable
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && maps.EqualFunc(x, y, jsonEqual)
	}
	if typeOf(a) != typeNumber || typeOf(b) != typeNumber {
		return false
	}
	var na, nb number
	return numberOf(a, &na) && numberOf(b, &nb) && equalNumber(&na, &nb)
}

// hashJSON hashes v consistently with jsonEqual.
func hashJSON(h *maphash.Hash, v any) {
	switch x := v.(type) {
	case nil:
		h.WriteByte('n')
	case bool:
		h.WriteString(strconv.FormatBool(x))
	case string:
		h.WriteByte('s')
		h.WriteString(x)
		h.WriteByte(0)
	case []any:
		h.WriteByte('[')
		for _, e := range x {
			hashJSON(h, e)
		}
		h.WriteByte(']')
	case map[string]any:
		// order-independent: sum of per-entry hashes
		var sum uint64
		seed := h.Seed()
		for k, e := range x {
			var eh maphash.Hash
			eh.SetSeed(seed)
			eh.WriteString(k)
			eh.WriteByte(0)
			hashJSON(&eh, e)
			sum += eh.Sum64()
		}
		h.WriteByte('{')
		h.WriteString(strconv.FormatUint(sum, 16))
	default:
		var n number
		if !numberOf(v, &n) {
			h.WriteByte('?')
			return
		}
		h.WriteByte('#')
		if n.neg {
			h.WriteByte('-')
		}
		h.WriteString(n.digitString())
		h.WriteByte('e')
		h.WriteString(strconv.FormatInt(n.exp, 10))
	}
}

// firstDuplicate returns the indexes i < j of the first pair of equal items
// (the least j, then the least i), or -1, -1. Only items of equal hash are
// compared, and an item equal to an earlier one ends the search, so n equal
// items cost one comparison.
func firstDuplicate(items []any) (int, int) {
	seed := maphash.MakeSeed()
	byHash := map[uint64][]int{}
	for j, it := range items {
		var h maphash.Hash
		h.SetSeed(seed)
		hashJSON(&h, it)
		k := h.Sum64()
		for _, i := range byHash[k] {
			if jsonEqual(items[i], it) {
				return i, j
			}
		}
		byHash[k] = append(byHash[k], j)
	}
	return -1, -1
}
