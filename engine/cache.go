package engine

import (
	"container/list"
	"sync"
)

// lru is a bounded least-recently-used cache, safe for concurrent use: at
// most size entries and, when maxCost is positive, entries whose costs (as
// put says, about their bytes) add up to at most maxCost. A nil *lru holds
// nothing, and the empty key is never stored.
type lru[V any] struct {
	mu      sync.Mutex
	size    int
	maxCost int
	cost    int        // of the entries held
	order   *list.List // front = most recent; values are *lruEntry[V]
	byKey   map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	value V
	cost  int
}

func newLRU[V any](size, maxCost int) *lru[V] {
	return &lru[V]{size: size, maxCost: maxCost, order: list.New(), byKey: make(map[string]*list.Element)}
}

// lookup returns the value under key, a string or bytes (which it does not
// copy), and marks it the most recently used.
func lookup[V any, K string | []byte](c *lru[V], key K) (V, bool) {
	var zero V
	if c == nil || len(key) == 0 {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[string(key)]
	if !ok {
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry[V]).value, true
}

// put stores v under key at the given cost, evicting the least recently
// used entries until the cache is within its bounds again. An entry that
// costs more than the whole budget is not stored.
func (c *lru[V]) put(key string, v V, cost int) {
	if c == nil || key == "" || (c.maxCost > 0 && cost > c.maxCost) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&lruEntry[V]{key: key, value: v, cost: cost})
	c.cost += cost
	for c.order.Len() > c.size || (c.maxCost > 0 && c.cost > c.maxCost) {
		oldest := c.order.Remove(c.order.Back()).(*lruEntry[V])
		delete(c.byKey, oldest.key)
		c.cost -= oldest.cost
	}
}

// totalCost is the cost of the entries held.
func (c *lru[V]) totalCost() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cost
}

func (c *lru[V]) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
