package store

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/signing"
)

// Verify checks the whole file: bbolt's page-level consistency check, then
// that every verdict is under its own time and id and has its id entry and
// no id entry is left without a verdict, that every verdict of a counted
// agent has its index entry, that each agent's counters match its index,
// that the transparency log holds exactly the stored verdicts (see
// verifyLog), and that the key records account for every receipt (see
// verifyKeys). Each check that fails adds its finding to the error (joined,
// one per line). It reads the entire file (O(history)): for `verifier store
// check`, tests and offline checks, not for a health probe (see Check).
func (b *Bolt) Verify(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := b.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			// The pages are damaged: reading the buckets may not be safe.
			return fmt.Errorf("%w: %w", ErrCorrupt, errors.Join(errs...))
		}
		checks := []func(*bolt.Tx) error{verifyIndex, verifyLog, verifyBoltKeys}
		if b.noLog {
			checks = []func(*bolt.Tx) error{verifyIndex, verifyBoltKeys} // a measurement's store: its log is empty by design
		}
		for _, check := range checks {
			if err := recoverCorrupt(func() error { return check(tx) }); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return fmt.Errorf("verifying store %s: %w", b.path, err)
	}
	return nil
}

// hashReplay recomputes a log's stored hashes record by record, as
// appending them computed them (tlog.StoredHashes), and checks each against
// the one the store holds.
type hashReplay struct {
	hashes []tlog.Hash // recomputed, by storage index
}

// add replays record idx, whose entry is entry; stored returns the store's
// hash at a storage index (nil when it has none).
func (r *hashReplay) add(idx int64, entry []byte, stored func(int64) []byte) error {
	add, err := tlog.StoredHashes(idx, entry, r)
	if err != nil {
		return fmt.Errorf("%w: log record %d: %w", ErrCorrupt, idx, err)
	}
	for _, h := range add {
		if !bytes.Equal(stored(int64(len(r.hashes))), h[:]) {
			return fmt.Errorf("%w: log hash %d is not the hash of the records before it", ErrCorrupt, len(r.hashes))
		}
		r.hashes = append(r.hashes, h)
	}
	return nil
}

// ReadHashes serves tlog the hashes recomputed so far.
func (r *hashReplay) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(r.hashes)) {
			return nil, fmt.Errorf("%w: log hash %d read before it was computed", ErrCorrupt, x)
		}
		out[i] = r.hashes[x]
	}
	return out, nil
}

// recoverCorrupt runs fn, turning a panic of bbolt on a damaged page into
// ErrCorrupt.
func recoverCorrupt(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return fn()
}

// verifyBoltKeys checks the file's key records (see verifyKeyRecords).
func verifyBoltKeys(tx *bolt.Tx) error {
	keys, err := boltSigningKeys(tx)
	if err != nil {
		return err
	}
	if _, err := boltLogIdentity(tx); err != nil {
		return err
	}
	check := newKeyRecordCheck(keys)
	err = tx.Bucket(bucketVerdicts).ForEach(func(key, record []byte) error {
		v, err := decodeVerdict(record)
		if err != nil {
			return fmt.Errorf("verdict %s: %w", key[min(8, len(key)):], err)
		}
		check.add(v)
		return nil
	})
	if err != nil {
		return err
	}
	return check.err()
}

// maxKeyFindings bounds how many receipts a key check names.
const maxKeyFindings = 5

// keyRecordCheck checks stored verdicts against the recorded signing keys:
// every verdict's key version is recorded, and its receipt's signature
// verifies under that key. A store that records no key at all (written
// before key records existed, and not opened by a server since) is not
// checked here: see CheckKeysRecorded.
type keyRecordCheck struct {
	keys     signing.Keys
	unknown  map[string]int // key version → verdicts signed by it, not recorded
	bad      []string       // verification ids whose receipt does not verify
	badTotal int
}

func newKeyRecordCheck(records []KeyRecord) *keyRecordCheck {
	c := &keyRecordCheck{keys: signing.Keys{}, unknown: map[string]int{}}
	for _, r := range records {
		c.keys[r.KeyVersion] = ed25519.PublicKey(r.PublicKey)
	}
	return c
}

// add checks one verdict.
func (c *keyRecordCheck) add(v Verdict) {
	if len(c.keys) == 0 {
		return
	}
	if _, ok := c.keys[v.KeyVersion]; !ok {
		c.unknown[v.KeyVersion]++
		return
	}
	report, err := signing.VerifyReceipt(v.Receipt, c.keys)
	if err != nil || report.KeyVersion != v.KeyVersion {
		c.badTotal++
		if len(c.bad) < maxKeyFindings {
			c.bad = append(c.bad, v.VerificationID)
		}
	}
}

// err is what the check found, nil when every verdict is accounted for.
func (c *keyRecordCheck) err() error {
	var errs []error
	for _, version := range slices.Sorted(maps.Keys(c.unknown)) {
		errs = append(errs, fmt.Errorf("%w: %d receipt(s) name key version %q, which no key record holds", ErrKeyRecords, c.unknown[version], version))
	}
	if c.badTotal > 0 {
		errs = append(errs, fmt.Errorf("%w: %d receipt(s) do not verify under the recorded key of their key version (e.g. %s): a receipt or a key record was changed",
			ErrCorrupt, c.badTotal, strings.Join(c.bad, ", ")))
	}
	return errors.Join(errs...)
}

// CheckKeysRecorded reports, as ErrKeyRecords, a store that holds verdicts
// but records no signing key (written before key records existed, and not
// opened by a server since): it cannot publish the keys of its receipts.
func CheckKeysRecorded(ctx context.Context, st Store) error {
	kr, ok := KeyRecordsOf(st)
	l, logged := LogOf(st)
	if !ok || !logged {
		return nil
	}
	keys, err := kr.SigningKeys(ctx)
	if err != nil || len(keys) > 0 {
		return err
	}
	tree, err := l.LogTree(ctx)
	if err != nil || tree.Size == 0 {
		return err
	}
	return fmt.Errorf("%w: no signing key is recorded for the %d stored receipts, so the store cannot publish the keys that verify them. "+
		"Fix: start the verifier once on this store with the key folder (or VERIFIER_SIGNING_KEY) that signed them — it records its keys —, "+
		"or run store copy with the data dir's keys/ beside the file", ErrKeyRecords, tree.Size)
}

// ErrKeyRecords: the store's key records do not account for its receipts
// (see [Bolt.Verify]).
var ErrKeyRecords = errors.New("key records incomplete")

// verifyIndex cross-checks the verdicts, verdict_ids, agents and agent_time
// buckets.
func verifyIndex(tx *bolt.Tx) error {
	ids := tx.Bucket(bucketVerdictIDs)
	index := tx.Bucket(bucketAgentTime)
	counted := map[string]*aggregate{}
	verdicts := 0
	err := tx.Bucket(bucketVerdicts).ForEach(func(key, record []byte) error {
		if len(key) <= 8 {
			return fmt.Errorf("%w: malformed verdict key %x", ErrCorrupt, key)
		}
		id := key[8:]
		v, err := decodeVerdict(record)
		if err != nil {
			return fmt.Errorf("verdict %s: %w", id, err)
		}
		if v.VerificationID != string(id) || v.VerifiedAt.UnixNano() != readTime(key) {
			return fmt.Errorf("%w: verdict under key %x has id %s and verified_at %s", ErrCorrupt,
				key, v.VerificationID, v.VerifiedAt.Format(time.RFC3339Nano))
		}
		if at := ids.Get(id); !bytes.Equal(at, key[:8]) {
			return fmt.Errorf("%w: verdict %s has id entry %x, want its time %x", ErrCorrupt, id, at, key[:8])
		}
		verdicts++
		if v.AgentID == "" || IsTestAgent(v.AgentID) {
			return nil
		}
		if index.Get(indexKey(v.AgentID, v.VerifiedAt.UnixNano(), v.VerificationID)) == nil {
			return fmt.Errorf("%w: verdict %s missing from the agent index", ErrCorrupt, id)
		}
		a := counted[v.AgentID]
		if a == nil {
			a = &aggregate{}
			counted[v.AgentID] = a
		}
		a.add(v.VerifiedAt.UnixNano(), v.Result == ResultPass)
		return nil
	})
	if err != nil {
		return err
	}
	// Every verdict has its id entry, and no two verdicts can have the same
	// one: as many entries as verdicts means no entry without a verdict.
	if n := ids.Stats().KeyN; n != verdicts {
		return fmt.Errorf("%w: %d id entries for %d verdicts", ErrCorrupt, n, verdicts)
	}
	entries := map[string]uint64{}
	err = index.ForEach(func(k, _ []byte) error {
		if len(k) < 2 || len(k) < 2+int(binary.BigEndian.Uint16(k)) {
			return fmt.Errorf("%w: malformed index key %x", ErrCorrupt, k)
		}
		entries[string(k[2:2+binary.BigEndian.Uint16(k)])]++
		return nil
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketAgents).ForEach(func(agent, v []byte) error {
		stored, err := decodeAggregate(v)
		if err != nil {
			return fmt.Errorf("agent %q: %w", agent, err)
		}
		want := counted[string(agent)]
		if want == nil || stored.total != want.total || stored.passed != want.passed || stored.failed != want.failed ||
			stored.first != want.first || stored.last != want.last || entries[string(agent)] != stored.total ||
			!sameSum(stored.wPass, want.wPass) || !sameSum(stored.wFail, want.wFail) {
			return fmt.Errorf("%w: counters of agent %q do not match its verdicts", ErrCorrupt, agent)
		}
		delete(counted, string(agent))
		return nil
	})
	if err != nil {
		return err
	}
	for agent := range counted {
		return fmt.Errorf("%w: agent %q has verdicts but no counters", ErrCorrupt, agent)
	}
	return nil
}

// sameSum reports whether two weighted sums agree up to the rounding that
// adding the same weights in another order can cause.
func sameSum(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// verifyLog checks the transparency log against the verdicts: one record
// per stored verdict and none other, each verdict's index naming a record
// whose entry is LogEntry of its receipt and whose id is its own, and the
// stored hashes those of the entries in record order (recomputed with
// tlog.StoredHashes).
func verifyLog(tx *bolt.Tx) error {
	n, err := logSize(tx)
	if err != nil {
		return err
	}
	stored := tx.Bucket(bucketLogHashes)
	var replay hashReplay
	records := map[int64][2][]byte{} // index → entry, verification id
	var next int64
	err = tx.Bucket(bucketLogEntries).ForEach(func(k, v []byte) error {
		if len(k) != 8 || int64(binary.BigEndian.Uint64(k)) != next || next >= n {
			return fmt.Errorf("%w: log record %x where record %d of %d was due", ErrCorrupt, k, next, n)
		}
		entry, id, err := splitLogEntry(next, v)
		if err != nil {
			return err
		}
		if err := replay.add(next, entry, func(i int64) []byte { return stored.Get(encodeUint64(uint64(i))) }); err != nil {
			return err
		}
		records[next] = [2][]byte{entry, id}
		next++
		return nil
	})
	if err != nil {
		return err
	}
	if next != n {
		return fmt.Errorf("%w: the log has %d records, its size says %d", ErrCorrupt, next, n)
	}
	logIndex := tx.Bucket(bucketLogIndex)
	verdicts := int64(0)
	err = tx.Bucket(bucketVerdicts).ForEach(func(key, record []byte) error {
		verdicts++
		raw := logIndex.Get(key)
		if len(raw) != 8 {
			return fmt.Errorf("%w: verdict %s has no log index", ErrCorrupt, key[8:])
		}
		rec, ok := records[int64(binary.BigEndian.Uint64(raw))]
		if !ok || !bytes.Equal(rec[1], key[8:]) {
			return fmt.Errorf("%w: verdict %s's log record names another verdict", ErrCorrupt, key[8:])
		}
		v, err := decodeVerdict(record)
		if err != nil {
			return err
		}
		entry, err := LogEntry(v.Receipt)
		if err != nil || !bytes.Equal(entry[:], rec[0]) {
			return fmt.Errorf("%w: verdict %s's log entry is not the hash of its receipt", ErrCorrupt, key[8:])
		}
		return nil
	})
	if err != nil {
		return err
	}
	if verdicts != n {
		return fmt.Errorf("%w: %d verdicts stored, %d log records", ErrCorrupt, verdicts, n)
	}
	return nil
}
