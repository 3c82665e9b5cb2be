package store

import (
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// keyWriteProbe is the meta key the write probe rewrites with its time.
var keyWriteProbe = []byte("write_probe")

// writeHealth is the outcome of the store's last commit, whether a caller's
// write or the write probe's: [Bolt.Check] reports a failure until a later
// commit succeeds.
type writeHealth struct {
	failure atomic.Pointer[error] // nil after a successful commit
}

// record keeps the outcome of a commit.
func (h *writeHealth) record(err error) {
	if err == nil {
		h.failure.Store(nil)
		return
	}
	h.failure.Store(&err)
}

// err returns the last commit's failure, or nil when it succeeded.
func (h *writeHealth) err() error {
	if p := h.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// update runs fn in a write transaction of db and records whether the
// transaction could be committed. An error of fn itself (a duplicate
// verdict, an invalid argument) rolls the transaction back and says nothing
// about the file, so it is not recorded.
func (h *writeHealth) update(db *bolt.DB, fn func(*bolt.Tx) error) error {
	var fnErr error
	err := db.Update(func(tx *bolt.Tx) error {
		fnErr = fn(tx)
		return fnErr
	})
	if fnErr == nil {
		h.record(err)
	}
	return err
}

// batch is update through bbolt's DB.Batch (whose fn may run more than
// once: the last run decides).
func (h *writeHealth) batch(db *bolt.DB, fn func(*bolt.Tx) error) error {
	var fnErr error
	err := db.Batch(func(tx *bolt.Tx) error {
		fnErr = fn(tx)
		return fnErr
	})
	if fnErr == nil {
		h.record(err)
	}
	return err
}

// probeLoop commits a write probe every interval until stop is closed, so
// that Check notices a file that can no longer be written (a full disk)
// while no caller writes, and notices when it can again.
func (b *Bolt) probeLoop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = b.probe() // its outcome is recorded for Check
		}
	}
}

// probe rewrites the probe's time in the meta bucket: a small write
// transaction, committed and synced like a verdict's.
func (b *Bolt) probe() error {
	at := encodeUint64(uint64(b.now().UnixNano()))
	return b.write(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyWriteProbe, at)
	})
}
