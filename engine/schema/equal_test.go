package schema

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestFirstDuplicate compares firstDuplicate with the pairwise search it
// stands for (the least j, then the least i) on random arrays whose items
// repeat often, as numbers of several spellings, strings, arrays and objects.
func TestFirstDuplicate(t *testing.T) {
	pool := []any{json.Number("1"), json.Number("1.0"), json.Number("10e-1"), json.Number("2"), "1", "a", nil, true, false,
		[]any{json.Number("1")}, []any{json.Number("1.00")}, map[string]any{"a": json.Number("1")}, map[string]any{"a": "1"},
		map[string]any{}, []any{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		items := make([]any, rng.IntN(8))
		for i := range items {
			items[i] = pool[rng.IntN(len(pool))]
		}
		wi, wj := -1, -1
	search:
		for j := range items {
			for i := range j {
				if jsonEqual(items[i], items[j]) {
					wi, wj = i, j
					break search
				}
			}
		}
		if i, j := firstDuplicate(items); i != wi || j != wj {
			t.Fatalf("firstDuplicate(%v) = %d, %d, want %d, %d", items, i, j, wi, wj)
		}
	}
}
