package store

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// errHoldReleased: Commit was called on a hold that was given back.
var errHoldReleased = errors.New("the free call was released")

// allowanceLedger counts free calls in memory so that using one costs no
// commit of its own. It holds an entry for each allowance key (UTC day and
// client) with a change that is not yet in the file: the count it decides
// by (used) is the file's count plus the calls held since, so it is exact
// in this process — the only one, as the file is locked — whatever the
// concurrency. The counts reach the file with the next group commit,
// whatever writes it: a free call and the verdict it pays for share one
// transaction. An entry whose count is in the file (clean) stays as a cache
// of that count, sparing the client's next call a read, until the ledger
// holds more than maxCachedAllowances entries: then every clean entry is
// dropped. So the ledger holds at most that many entries beyond the calls
// in flight.
type allowanceLedger struct {
	mu       sync.Mutex
	entries  map[string]*ledgerEntry // by allowance key
	dirty    []*ledgerEntry          // entries changed since the last snapshot
	nextSnap uint64                  // number of the next snapshot
	durable  uint64                  // number of the last snapshot committed
	sweepAt  int                     // drop the clean entries past this many entries
}

// maxCachedAllowances bounds the clean entries the ledger keeps (about 100
// bytes each).
const maxCachedAllowances = 4096

// ledgerEntry is one allowance key with a change not yet in the file.
type ledgerEntry struct {
	key     string
	used    uint64 // free calls used, held ones included
	written uint64 // the count in the file
	dirty   bool   // changed since the last snapshot
	writing bool   // in a snapshot being committed
}

// ledgerSnapshot is what one commit writes: the counts of the entries
// changed since the previous snapshot.
type ledgerSnapshot struct {
	num    uint64
	writes []ledgerWrite
}

type ledgerWrite struct {
	e     *ledgerEntry
	count uint64
}

func newAllowanceLedger() *allowanceLedger {
	return &allowanceLedger{entries: map[string]*ledgerEntry{}, nextSnap: 1, sweepAt: maxCachedAllowances}
}

// entry returns key's entry, reading the count from the file when there is
// none (then no change of the key is pending, so the file is up to date).
// l.mu must be held.
func (l *allowanceLedger) entry(db *bolt.DB, key string) (*ledgerEntry, error) {
	if e, ok := l.entries[key]; ok {
		return e, nil
	}
	var used uint64
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		used, err = decodeCount(tx.Bucket(bucketAllowance).Get([]byte(key)))
		return err
	})
	if err != nil {
		return nil, err
	}
	e := &ledgerEntry{key: key, used: used, written: used}
	l.entries[key] = e
	return e, nil
}

// touch marks e changed. l.mu must be held.
func (l *allowanceLedger) touch(e *ledgerEntry) {
	if !e.dirty {
		e.dirty = true
		l.dirty = append(l.dirty, e)
	}
}

// clean reports whether e's count is the file's.
func (e *ledgerEntry) clean() bool { return !e.dirty && !e.writing && e.used == e.written }

// settled is called when e may have become clean: it stays cached, unless
// the ledger is past its bound, which drops every clean entry. l.mu must be
// held.
func (l *allowanceLedger) settled(e *ledgerEntry) {
	if !e.clean() || len(l.entries) <= l.sweepAt {
		return
	}
	for key, e := range l.entries {
		if e.clean() {
			delete(l.entries, key)
		}
	}
	// The entries left are in flight; sweep again only once as many more
	// have come, so a sweep costs O(1) per entry.
	l.sweepAt = max(maxCachedAllowances, 2*len(l.entries))
}

// snapshot takes the changed counts for the commit about to start. Commits
// take snapshots one at a time (groupCommit drains in one goroutine), and
// done is called before the next one.
func (l *allowanceLedger) snapshot() ledgerSnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ledgerSnapshot{num: l.nextSnap}
	l.nextSnap++
	for i, e := range l.dirty {
		l.dirty[i] = nil
		e.dirty = false
		if e.used == e.written {
			l.settled(e)
			continue
		}
		e.writing = true
		s.writes = append(s.writes, ledgerWrite{e: e, count: e.used})
	}
	l.dirty = l.dirty[:0]
	return s
}

// apply writes the snapshot's counts in tx. The counts are absolute, so
// running it again in a retried transaction writes the same.
func (s *ledgerSnapshot) apply(tx *bolt.Tx) error {
	if len(s.writes) == 0 {
		return nil
	}
	bk := tx.Bucket(bucketAllowance)
	for _, w := range s.writes {
		if err := bk.Put([]byte(w.e.key), encodeUint64(w.count)); err != nil {
			return fmt.Errorf("writing allowance: %w", err)
		}
	}
	return nil
}

// done records the end of the snapshot's commit: committed, its counts are
// in the file; otherwise they go into the next snapshot.
func (l *allowanceLedger) done(s ledgerSnapshot, committed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range s.writes {
		w.e.writing = false
		if committed {
			w.e.written = w.count
		} else {
			l.touch(w.e)
		}
		l.settled(w.e)
	}
	if committed {
		l.durable = s.num
	}
}

// pending reports whether some count is not yet in the file.
func (l *allowanceLedger) pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.dirty) > 0
}

// holdState is where a boltHold stands.
type holdState int

const (
	holdHeld holdState = iota
	holdCommitted
	holdReleased
)

// boltHold is a free call reserved in the ledger of b.
type boltHold struct {
	b     *Bolt
	key   string
	snap  uint64    // any snapshot from this number on counts the call
	state holdState // guarded by b.ledger.mu
}

// Commit returns once the call is counted in the file: at once when a
// commit since the reservation (usually the verdict's) wrote it, else after
// a commit of its own.
func (h *boltHold) Commit() error {
	committed := func() (bool, error) {
		l := h.b.ledger
		l.mu.Lock()
		defer l.mu.Unlock()
		if h.state == holdHeld && l.durable >= h.snap {
			h.state = holdCommitted
		}
		switch h.state {
		case holdCommitted:
			return true, nil
		case holdReleased:
			return false, fmt.Errorf("committing free call: %w", errHoldReleased)
		}
		return false, nil
	}
	if ok, err := committed(); ok || err != nil {
		return err
	}
	// A commit that starts now takes a snapshot with the call in it.
	if err := h.b.group.do(func(*bolt.Tx) error { return nil }); err != nil {
		return fmt.Errorf("committing free call: %w", err)
	}
	if ok, err := committed(); ok || err != nil {
		return err
	}
	return errors.New("committing free call: the count was not written")
}

// Release gives the call back; a no-op after Commit or a first Release.
// The lower count reaches the file with the next commit.
func (h *boltHold) Release() {
	l := h.b.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.state != holdHeld {
		return
	}
	h.state = holdReleased
	e, err := l.entry(h.b.db, h.key)
	if err != nil || e.used == 0 {
		// The file cannot be read (closing): the call stays used, which
		// only ever errs against the client.
		return
	}
	e.used--
	l.touch(e)
}
