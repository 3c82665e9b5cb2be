package engine

import (
	"fmt"
	"testing"
)

// TestLRUBounds: the cache keeps at most size entries and, with a budget,
// entries whose costs fit it, dropping the least recently used first; an
// entry dearer than the whole budget is never stored.
func TestLRUBounds(t *testing.T) {
	tests := []struct {
		name          string
		size, budget  int
		costs         []int
		touch         string // read between the puts of k1 and k2
		want, dropped []string
	}{
		{"count only", 2, 0, []int{100, 100, 100}, "", []string{"k1", "k2"}, []string{"k0"}},
		{"recently read stays", 2, 0, []int{1, 1, 1}, "k0", []string{"k0", "k2"}, []string{"k1"}},
		{"budget", 10, 250, []int{100, 100, 100}, "", []string{"k1", "k2"}, []string{"k0"}},
		{"budget, recently read stays", 10, 250, []int{100, 100, 100}, "k0", []string{"k0", "k2"}, []string{"k1"}},
		{"too dear to store", 10, 250, []int{100, 300, 100}, "", []string{"k0", "k2"}, []string{"k1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newLRU[int](tt.size, tt.budget)
			for i, cost := range tt.costs {
				if i == 2 && tt.touch != "" {
					lookup(c, tt.touch)
				}
				c.put(fmt.Sprintf("k%d", i), i, cost)
			}
			for _, k := range tt.want {
				if _, ok := lookup(c, k); !ok {
					t.Errorf("%s was dropped", k)
				}
			}
			for _, k := range tt.dropped {
				if _, ok := lookup(c, k); ok {
					t.Errorf("%s is still held", k)
				}
			}
			if tt.budget > 0 && c.cost > tt.budget {
				t.Errorf("holds cost %d, budget %d", c.cost, tt.budget)
			}
		})
	}
}
