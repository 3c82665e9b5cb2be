package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// groupCommit runs the write functions of concurrent callers in shared
// transactions — one commit, one fsync, for all of them. It is bbolt's
// DB.Batch without the timer: a write arriving while no commit runs starts
// one at once (no added latency when idle), and every write arriving during
// a commit goes into the next one (batches as large as the load).
//
// As with DB.Batch, a function may run more than once, each time in a fresh
// transaction: when one function of a batch fails, the batch is rolled back,
// the others are committed without it, and then it runs alone so that its
// error is its own.
//
// Each batch's transaction also writes the free-allowance counts changed
// since the previous one (ledger), so a free call is counted by the commit
// of the verdict it pays for.
type groupCommit struct {
	db      *bolt.DB
	ledger  *allowanceLedger
	health  *writeHealth // records each commit's outcome
	batches batcher[pendingWrite]
}

// newGroupCommit returns the group commit of db, at most maxSize writes
// per transaction.
func newGroupCommit(db *bolt.DB, maxSize int, ledger *allowanceLedger, health *writeHealth) *groupCommit {
	g := &groupCommit{db: db, ledger: ledger, health: health}
	g.batches = batcher[pendingWrite]{maxSize: maxSize, run: g.commit}
	return g
}

type pendingWrite struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// do runs fn in a shared transaction and returns once it is committed.
func (g *groupCommit) do(fn func(*bolt.Tx) error) error {
	w := pendingWrite{fn: fn, done: make(chan error, 1)}
	g.batches.add(w)
	return <-w.done
}

// commit runs batch in one transaction, taking out any function that fails
// and running it alone afterwards.
func (g *groupCommit) commit(batch []pendingWrite) {
	var failed []pendingWrite
	for len(batch) > 0 {
		failIdx := -1
		snap := g.ledger.snapshot()
		err := g.health.update(g.db, func(tx *bolt.Tx) error {
			if err := snap.apply(tx); err != nil {
				return err
			}
			for i, w := range batch {
				if err := safeCall(w.fn, tx); err != nil {
					failIdx = i
					return err
				}
			}
			return nil
		})
		g.ledger.done(snap, err == nil)
		if failIdx >= 0 {
			failed = append(failed, batch[failIdx])
			batch = append(batch[:failIdx], batch[failIdx+1:]...)
			continue
		}
		for _, w := range batch {
			w.done <- err
		}
		break
	}
	for _, w := range failed {
		w.done <- g.health.update(g.db, func(tx *bolt.Tx) error { return safeCall(w.fn, tx) })
	}
}

// safeCall runs fn, turning a panic (bbolt panics on some damaged pages)
// into an error so that one bad write cannot stop the committer.
func safeCall(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic in write: %v", ErrCorrupt, r)
		}
	}()
	return fn(tx)
}
