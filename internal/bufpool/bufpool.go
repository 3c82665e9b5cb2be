// Package bufpool keeps spare byte buffers for bytes that live only until
// they are hashed or signed, such as the request document of request_hash
// (engine) and the signed document of an attestation (signing), so that
// each verification does not allocate them anew. A buffer holds nothing
// from one use to the next that can reach a result: every user writes it
// from its start.
//
//	var docs = bufpool.New(64 << 10)
//
//	buf := docs.Get()
//	defer docs.Put(buf)
//	doc := append((*buf)[:0], "…"...)
//	*buf = doc // keep the grown buffer
package bufpool

import "sync"

// Pool is a sync.Pool of byte buffers that keeps none whose capacity is
// above its limit, so that one large document does not stay in memory. It is
// safe for concurrent use.
type Pool struct {
	pool sync.Pool
	max  int
}

// New returns a Pool that keeps buffers of up to max bytes of capacity.
func New(max int) *Pool {
	return &Pool{max: max}
}

// Get returns a buffer of length 0, spare or new.
func (p *Pool) Get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	return new([]byte)
}

// Put gives a buffer back for a later Get, unless its capacity is above
// the pool's limit. The caller must not use it afterwards.
func (p *Pool) Put(b *[]byte) {
	if cap(*b) <= p.max {
		p.pool.Put(b)
	}
}
