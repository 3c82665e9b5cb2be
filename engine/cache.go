package engine

import (
	"container/list"
	"sync"
)

// lru is a bounded least-recently-used cache, safe for concurrent use. A
// nil *lru holds nothing, and the empty key is never stored.
type lru[V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *lruEntry[V]
	byKey map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	value V
}

func newLRU[V any](size int) *lru[V] {
	return &lru[V]{size: size, order: list.New(), byKey: make(map[string]*list.Element)}
}

func (c *lru[V]) get(key string) (V, bool) {
	var zero V
	if c == nil || key == "" {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry[V]).value, true
}

// getBytes is get for a key held as bytes, without copying it to a string.
func (c *lru[V]) getBytes(key []byte) (V, bool) {
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

func (c *lru[V]) put(key string, v V) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&lruEntry[V]{key: key, value: v})
	for c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*lruEntry[V]).key)
	}
}

func (c *lru[V]) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
