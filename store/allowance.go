package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// dayLayout is the UTC date at the start of an allowance key.
const dayLayout = "20060102"

// ReserveAllowance holds one of the client's free calls for the UTC day of
// now, if fewer than limit were used: exact under any concurrency, and
// without a commit of its own. The hold (nil when not granted) counts the
// call in memory; its Commit returns once the count is in the file —
// without waiting when a commit since the reservation wrote it, as the
// commit of the verdict the call paid for does — and its Release gives the
// call back. A hold neither committed nor released is written with the next
// commit, as used. Remaining is what is left after this call.
func (b *Bolt) ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, AllowanceHold, error) {
	if err := ctx.Err(); err != nil {
		return Allowance{}, nil, err
	}
	if err := checkKey("client", client); err != nil {
		return Allowance{}, nil, fmt.Errorf("taking allowance: %w", err)
	}
	key := string(allowanceKey(client, now))
	l := b.ledger
	l.mu.Lock()
	e, err := l.entry(b.db, key)
	if err != nil {
		l.mu.Unlock()
		return Allowance{}, nil, fmt.Errorf("taking allowance: %w", err)
	}
	a := allowanceOf(e.used, limit, now)
	if !a.Granted {
		l.settled(e)
		l.mu.Unlock()
		return a, nil, nil
	}
	e.used++
	a.Remaining--
	l.touch(e)
	h := &boltHold{b: b, key: key, snap: l.nextSnap}
	l.mu.Unlock()
	b.maybePurge()
	return a, h, nil
}

// TakeAllowance uses one of the client's free calls for the UTC day of now,
// if fewer than limit were used; exact under any concurrency. Remaining is
// what is left after this call. It is ReserveAllowance with the hold
// committed at once.
func (b *Bolt) TakeAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	a, h, err := b.ReserveAllowance(ctx, client, now, limit)
	if err != nil || h == nil {
		return a, err
	}
	if err := h.Commit(); err != nil {
		return Allowance{}, fmt.Errorf("taking allowance: %w", err)
	}
	return a, nil
}

// PeekAllowance reports the client's allowance for the UTC day of now
// without using it: Granted says whether a call now would be free, and
// Remaining how many free calls are left (calls held count as used).
func (b *Bolt) PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	if err := ctx.Err(); err != nil {
		return Allowance{}, err
	}
	if err := checkKey("client", client); err != nil {
		return Allowance{}, fmt.Errorf("reading allowance: %w", err)
	}
	key := string(allowanceKey(client, now))
	l := b.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[key]; ok {
		return allowanceOf(e.used, limit, now), nil
	}
	var used uint64
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		used, err = decodeCount(tx.Bucket(bucketAllowance).Get([]byte(key)))
		return err
	})
	if err != nil {
		return Allowance{}, fmt.Errorf("reading allowance: %w", err)
	}
	return allowanceOf(used, limit, now), nil
}

// allowanceOf is the allowance of a client that used used free calls on the
// UTC day of now.
func allowanceOf(used uint64, limit int, now time.Time) Allowance {
	limit = max(limit, 0)
	y, m, d := now.UTC().Date()
	a := Allowance{Limit: limit, Resets: time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)}
	if used < uint64(limit) {
		a.Granted = true
		a.Remaining = limit - int(used)
	}
	return a
}

// allowanceKey is the UTC date of now (dayLayout) followed by the client:
// keys sort by day, so purging past days reads only what it deletes.
func allowanceKey(client string, now time.Time) []byte {
	return append([]byte(now.UTC().Format(dayLayout)), client...)
}

func decodeCount(v []byte) (uint64, error) {
	switch len(v) {
	case 0:
		return 0, nil
	case 8:
		return binary.BigEndian.Uint64(v), nil
	}
	return 0, fmt.Errorf("%w: allowance counter of %d bytes", ErrCorrupt, len(v))
}

// purge deletes allowance counters of UTC days before now's and payment ids
// whose retention ended before now.
func purge(tx *bolt.Tx, now time.Time) error {
	today := []byte(now.UTC().Format(dayLayout))
	c := tx.Bucket(bucketAllowance).Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k[:min(len(k), len(dayLayout))], today) < 0; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return fmt.Errorf("purging allowance: %w", err)
		}
	}
	cutoff := appendTime(nil, now.UnixNano())
	payments := tx.Bucket(bucketPayments)
	c = tx.Bucket(bucketPaymentExp).Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k[:min(len(k), 8)], cutoff) < 0; k, _ = c.First() {
		if err := payments.Delete(bytes.Clone(k[min(len(k), 8):])); err != nil {
			return fmt.Errorf("purging payments: %w", err)
		}
		if err := c.Delete(); err != nil {
			return fmt.Errorf("purging payments: %w", err)
		}
	}
	return nil
}
