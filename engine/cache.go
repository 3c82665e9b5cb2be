package engine

import (
	"container/list"
	"sync"

	"github.com/verifier-dev/verifier/engine/schema"
)

// schemaCache is a bounded least-recently-used cache of compiled schemas,
// keyed by the schema's canonical hash.
type schemaCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *cacheEntry
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key    string
	schema *schema.Schema
}

func newSchemaCache(size int) *schemaCache {
	return &schemaCache{size: size, order: list.New(), byKey: make(map[string]*list.Element)}
}

func (c *schemaCache) get(key string) (*schema.Schema, bool) {
	if c == nil || key == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).schema, true
}

func (c *schemaCache) put(key string, s *schema.Schema) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, schema: s})
	for c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*cacheEntry).key)
	}
}

func (c *schemaCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
