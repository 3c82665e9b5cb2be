package store

import "sync"

// batcher hands the jobs of concurrent callers to run in batches: a job
// arriving while no batch runs starts one at once (no added latency when
// idle), and every job arriving while a batch runs goes into the next one
// (batches as large as the load, at most maxSize). One goroutine runs the
// batches, one after another; run must answer every job of its batch.
type batcher[J any] struct {
	maxSize int
	run     func(batch []J)

	mu      sync.Mutex
	queue   []J
	running bool // a goroutine is draining queue
}

// add queues j for the next batch.
func (b *batcher[J]) add(j J) {
	b.mu.Lock()
	b.queue = append(b.queue, j)
	if !b.running {
		b.running = true
		go b.drain()
	}
	b.mu.Unlock()
}

// drain runs the queue, batch after batch, until it is empty.
func (b *batcher[J]) drain() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), b.maxSize)
		if n == 0 {
			b.running = false
			b.queue = nil
			b.mu.Unlock()
			return
		}
		batch := make([]J, n)
		copy(batch, b.queue)
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.run(batch)
	}
}
