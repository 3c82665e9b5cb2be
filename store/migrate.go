package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// migrate moves the file from schema version from to from+1, in the
// opening transaction: a failed step leaves the file as it was.
func migrate(tx *bolt.Tx, from uint64) error {
	switch from {
	case 1:
		return migrateTimeOrderedVerdicts(tx)
	default:
		return fmt.Errorf("no migration from schema version %d", from)
	}
}

// migrateTimeOrderedVerdicts moves version 1 to 2. Version 1 kept verdicts
// under their verification id, a random UUID, so every write went to a
// random page of the file; version 2 keys them by time(verified_at) and
// id, and looks ids up in verdict_ids. The records are kept byte for byte;
// verified_at is read from each one. The new buckets are written in key
// order, so their pages are filled.
//
// The whole verdicts bucket is rewritten in one transaction, which holds
// its pages in memory until the commit: migrating a store takes about as
// much memory as its verdicts take on disk, once.
func migrateTimeOrderedVerdicts(tx *bolt.Tx) error {
	old := tx.Bucket(bucketVerdicts)
	if old == nil {
		return fmt.Errorf("%w: version 1 file without a %s bucket", ErrCorrupt, bucketVerdicts)
	}
	ids, err := tx.CreateBucket(bucketVerdictIDs)
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucketVerdictIDs, err)
	}
	ids.FillPercent = 1 // filled in key order: the old bucket's
	type entry struct{ key, record []byte }
	var entries []entry
	err = old.ForEach(func(id, record []byte) error {
		nanos, err := recordTime(record)
		if err != nil {
			return fmt.Errorf("verdict %s: %w", id, err)
		}
		key := timeKey(nanos, string(id))
		entries = append(entries, entry{key, record})
		return ids.Put(key[8:], key[:8])
	})
	if err != nil {
		return err
	}
	// The old bucket's pages are only freed by the commit, so the records
	// (slices of the mapped file) stay valid until they are written again.
	if err := tx.DeleteBucket(bucketVerdicts); err != nil {
		return fmt.Errorf("deleting the version 1 %s bucket: %w", bucketVerdicts, err)
	}
	verdicts, err := tx.CreateBucket(bucketVerdicts)
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucketVerdicts, err)
	}
	verdicts.FillPercent = 1
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	for _, e := range entries {
		if err := verdicts.Put(e.key, e.record); err != nil {
			return fmt.Errorf("writing verdict %s: %w", e.key[8:], err)
		}
	}
	return nil
}

// recordTime returns the verified_at of a verdicts-bucket value, in Unix
// nanoseconds, reading only that field.
func recordTime(record []byte) (int64, error) {
	fields, _, err := splitRecord(record)
	if err != nil {
		return 0, err
	}
	var v struct {
		VerifiedAt time.Time `json:"verified_at"`
	}
	if err := json.Unmarshal(fields, &v); err != nil {
		return 0, fmt.Errorf("%w: verdict record: %v", ErrCorrupt, err)
	}
	if v.VerifiedAt.Before(minVerifiedAt) || !v.VerifiedAt.Before(maxVerifiedAt) {
		return 0, fmt.Errorf("%w: verdict record: verified_at %s out of range", ErrCorrupt, v.VerifiedAt.Format(time.RFC3339))
	}
	return v.VerifiedAt.UnixNano(), nil
}
