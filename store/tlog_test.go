package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gowebpki/jcs"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// checkLogged checks that every verdict of vs has a distinct log index
// below the log's size, whose entry is LogEntry of its receipt, with an
// inclusion proof that tlog.CheckRecord and transparency-dev/merkle's
// independent RFC 6962 verifier both accept against the log's root.
func checkLogged(t *testing.T, s *Bolt, vs []Verdict) {
	t.Helper()
	ctx := context.Background()
	tree, err := s.LogTree(ctx)
	if err != nil {
		t.Fatalf("LogTree() error = %v", err)
	}
	if tree.Size != int64(len(vs)) {
		t.Fatalf("log size = %d, want %d (one entry per stored verdict)", tree.Size, len(vs))
	}
	seen := make(map[int64]string)
	for _, v := range vs {
		inc, err := s.LogInclusion(ctx, v.VerificationID)
		if err != nil {
			t.Fatalf("LogInclusion(%s) error = %v", v.VerificationID, err)
		}
		if other, dup := seen[inc.Index]; dup {
			t.Fatalf("verdicts %s and %s share log index %d", other, v.VerificationID, inc.Index)
		}
		seen[inc.Index] = v.VerificationID
		if inc.Entry != wantLogEntry(t, v.Receipt) {
			t.Errorf("%s: log entry %x, want SHA-256 of its receipt's RFC 8785 form", v.VerificationID, inc.Entry)
		}
		if inc.Tree.Size < tree.Size || inc.Tree.Size == tree.Size && inc.Tree.Hash != tree.Hash {
			t.Fatalf("%s: proved against %+v, the log is %+v", v.VerificationID, inc.Tree, tree)
		}
		leaf := tlog.RecordHash(inc.Entry[:])
		if err := tlog.CheckRecord(inc.Proof, inc.Tree.Size, inc.Tree.Hash, inc.Index, leaf); err != nil {
			t.Errorf("%s: tlog.CheckRecord() error = %v", v.VerificationID, err)
		}
		path := make([][]byte, len(inc.Proof))
		for i := range inc.Proof {
			path[i] = inc.Proof[i][:]
		}
		err = proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(inc.Index), uint64(inc.Tree.Size),
			rfc6962.DefaultHasher.HashLeaf(inc.Entry[:]), path, inc.Tree.Hash[:])
		if err != nil {
			t.Errorf("%s: merkle proof.VerifyInclusion() error = %v", v.VerificationID, err)
		}
	}
}

// TestLogEveryStoredVerdict: verdicts stored one by one, concurrently
// through the group commit, and through SettlePayment each get one log
// entry with a verifiable inclusion proof; a replayed identical verdict
// adds none.
func TestLogEveryStoredVerdict(t *testing.T) {
	for _, wm := range writeModes {
		t.Run(wm.name, func(t *testing.T) {
			s := openTemp(t, &Options{NoSync: true, writeMode: wm.mode})
			ctx := context.Background()
			var vs []Verdict
			for i := range 5 {
				vs = append(vs, testVerdict(fmt.Sprintf("seq-%d", i), "agent-a", i%2 == 0, t0.Add(time.Duration(i)*time.Second)))
			}
			put(t, s, vs...)
			put(t, s, vs[2]) // a replay of a stored verdict logs nothing

			const workers = 40
			concurrent := make([]Verdict, workers)
			var wg sync.WaitGroup
			errs := make([]error, workers)
			for i := range workers {
				concurrent[i] = testVerdict(fmt.Sprintf("conc-%02d", i), fmt.Sprintf("agent-%d", i%3), i%3 != 0, t0.Add(time.Minute))
				wg.Go(func() { errs[i] = s.PutVerdict(ctx, concurrent[i]) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("concurrent PutVerdict error = %v", err)
			}
			vs = append(vs, concurrent...)

			exp := t0.Add(5 * time.Minute)
			if _, _, err := s.UsePayment(ctx, "0xpaid", exp, PaymentUse{State: PaymentPending, RequestKey: "r", Since: t0}); err != nil {
				t.Fatalf("UsePayment() error = %v", err)
			}
			paid := testVerdict("paid-1", "agent-a", true, t0.Add(2*time.Minute))
			settled := PaymentUse{State: PaymentSettled, RequestKey: "r", Since: t0, Settlement: []byte(`{}`), Answer: []byte(`{}`)}
			if err := s.SettlePayment(ctx, "0xpaid", settled, &paid); err != nil {
				t.Fatalf("SettlePayment() error = %v", err)
			}
			vs = append(vs, paid)
			checkLogged(t, s, vs)
		})
	}
}

// TestLogFailedWriteLogsNothing: a verdict refused as a duplicate (same id,
// other bytes) leaves no log entry, so the log never holds an entry
// without its stored verdict.
func TestLogFailedWriteLogsNothing(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	v := testVerdict("dup", "agent-a", true, t0)
	put(t, s, v)
	other := testVerdict("dup", "agent-a", false, t0)
	if err := s.PutVerdict(context.Background(), other); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("PutVerdict(same id, other bytes) error = %v, want ErrDuplicate", err)
	}
	checkLogged(t, s, []Verdict{v})
	if _, err := s.LogInclusion(context.Background(), "never-stored"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LogInclusion(never stored) error = %v, want ErrNotFound", err)
	}
}

// TestLogPersistsAndBackfills: the log survives a reopen, and a file whose
// verdicts were stored before the log existed has them logged at open, in
// stored order.
func TestLogPersistsAndBackfills(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	s, err := OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("OpenBolt() error = %v", err)
	}
	var vs []Verdict
	for i := range 7 {
		vs = append(vs, testVerdict(fmt.Sprintf("old-%d", i), "agent-a", true, t0.Add(time.Duration(i)*time.Second)))
	}
	put(t, s, vs...)
	before, err := s.LogTree(context.Background())
	if err != nil {
		t.Fatalf("LogTree() error = %v", err)
	}
	// Make the file look as if written before the log: no log buckets.
	err = s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketLogHashes, bucketLogIndex, bucketLogEntries} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Delete(keyLogSize)
	})
	if err != nil {
		t.Fatalf("removing the log: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	s, err = OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("reopen error = %v", err)
	}
	defer s.Close()
	after, err := s.LogTree(context.Background())
	if err != nil {
		t.Fatalf("LogTree() error = %v", err)
	}
	if after != before {
		t.Errorf("backfilled log %+v, want %+v (the same verdicts in the same order)", after, before)
	}
	checkLogged(t, s, vs)
	more := testVerdict("new-1", "agent-a", true, t0.Add(time.Hour))
	put(t, s, more)
	checkLogged(t, s, append(vs, more))
}

// TestLogIndexMovedFromIDKeys: a file that keeps the log index by
// verification id (bucket log_index, as written before the index was keyed
// by time) has it moved at open: every verdict keeps its index and proof,
// the old bucket is gone, and new verdicts are logged after them.
func TestLogIndexMovedFromIDKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "verifier.db")
	s, err := OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("OpenBolt() error = %v", err)
	}
	var vs []Verdict
	for i := range 5 {
		vs = append(vs, testVerdict(fmt.Sprintf("byid-%d", 4-i), "agent-a", true, t0.Add(time.Duration(i)*time.Second)))
	}
	put(t, s, vs...)
	want := make(map[string]int64)
	for _, v := range vs {
		if want[v.VerificationID], err = s.LogIndex(ctx, v.VerificationID); err != nil {
			t.Fatalf("LogIndex(%s) error = %v", v.VerificationID, err)
		}
	}
	// Rewrite the index in the old layout: by verification id.
	err = s.db.Update(func(tx *bolt.Tx) error {
		old, err := tx.CreateBucket(bucketLogIndexByID)
		if err != nil {
			return err
		}
		for id, index := range want {
			if err := old.Put([]byte(id), encodeUint64(uint64(index))); err != nil {
				return err
			}
		}
		return tx.DeleteBucket(bucketLogIndex)
	})
	if err != nil {
		t.Fatalf("writing the old layout: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	s, err = OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("reopen error = %v", err)
	}
	defer s.Close()
	for id, index := range want {
		if got, err := s.LogIndex(ctx, id); err != nil || got != index {
			t.Errorf("LogIndex(%s) after the move = %d, %v; want %d", id, got, err, index)
		}
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketLogIndexByID) != nil {
			t.Errorf("bucket %s is left after the move", bucketLogIndexByID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLogged(t, s, vs)
	more := testVerdict("byid-new", "agent-a", true, t0.Add(time.Hour))
	put(t, s, more)
	checkLogged(t, s, append(vs, more))
}

// TestNoLogLeavesNoHole: a store opened with NoLog (for measuring the
// log's cost) stores verdicts, by PutVerdict and by SettlePayment, with the
// log left empty; the next open without NoLog logs every one of them; and
// NoLog is refused on that file from then on, since a verdict stored
// without the log would then be missing from a log that holds entries.
func TestNoLogLeavesNoHole(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "verifier.db")
	s, err := OpenBolt(path, &Options{NoSync: true, NoLog: true})
	if err != nil {
		t.Fatalf("OpenBolt(NoLog) on a new file error = %v", err)
	}
	var vs []Verdict
	for i := range 3 {
		vs = append(vs, testVerdict(fmt.Sprintf("nolog-%d", i), "agent-a", true, t0.Add(time.Duration(i)*time.Second)))
	}
	put(t, s, vs...)
	if _, _, err := s.UsePayment(ctx, "0xpaid", t0.Add(time.Hour), PaymentUse{State: PaymentPending, RequestKey: "r", Since: t0}); err != nil {
		t.Fatalf("UsePayment() error = %v", err)
	}
	paid := testVerdict("nolog-paid", "agent-a", true, t0.Add(time.Minute))
	settled := PaymentUse{State: PaymentSettled, RequestKey: "r", Since: t0, Settlement: []byte(`{}`), Answer: []byte(`{}`)}
	if err := s.SettlePayment(ctx, "0xpaid", settled, &paid); err != nil {
		t.Fatalf("SettlePayment() error = %v", err)
	}
	vs = append(vs, paid)
	if tree, err := s.LogTree(ctx); err != nil || tree.Size != 0 {
		t.Errorf("LogTree() with NoLog = %+v, %v; want an empty log", tree, err)
	}
	if _, err := s.LogIndex(ctx, vs[0].VerificationID); !errors.Is(err, ErrNotFound) {
		t.Errorf("LogIndex() with NoLog error = %v, want ErrNotFound", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}

	s, err = OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("reopen with the log error = %v", err)
	}
	checkLogged(t, s, vs)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	if s, err := OpenBolt(path, &Options{NoSync: true, NoLog: true}); !errors.Is(err, ErrInvalidArgument) {
		if err == nil {
			s.Close()
		}
		t.Errorf("OpenBolt(NoLog) on a file whose log holds entries error = %v, want ErrInvalidArgument", err)
	}
}

// wantLogEntry is the log entry of receipt computed by the reference RFC
// 8785 implementation (gowebpki/jcs), not by the store's canonicalizer.
func wantLogEntry(t *testing.T, receipt []byte) [sha256.Size]byte {
	t.Helper()
	canonical, err := jcs.Transform(receipt)
	if err != nil {
		t.Fatalf("jcs.Transform(receipt) error = %v", err)
	}
	return sha256.Sum256(canonical)
}

// TestLogEntryIsCanonical: a receipt's entry does not depend on its
// serialization, so a receipt re-encoded by a client finds its entry; a
// receipt that is not I-JSON has none.
func TestLogEntryIsCanonical(t *testing.T) {
	stored := []byte(`{"result":"pass","verification_id":"v-1","overall":{"passed":2,"total":2,"ratio":1.0}}`)
	reencoded := []byte("{ \"overall\": {\"ratio\": 1, \"total\": 2, \"passed\": 2},\n \"verification_id\": \"v\\u002d1\", \"result\": \"pass\" }")
	a, err := LogEntry(stored)
	if err != nil {
		t.Fatalf("LogEntry(stored) error = %v", err)
	}
	b, err := LogEntry(reencoded)
	if err != nil {
		t.Fatalf("LogEntry(re-encoded) error = %v", err)
	}
	if a != b || a != wantLogEntry(t, stored) {
		t.Errorf("LogEntry(stored) = %x, LogEntry(re-encoded) = %x, want both %x", a, b, wantLogEntry(t, stored))
	}
	if a == sha256.Sum256(stored) {
		t.Errorf("LogEntry hashed the receipt's bytes, not its RFC 8785 form")
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, "{\"a\":\"\xff\"}", ``} {
		if _, err := LogEntry([]byte(bad)); err == nil {
			t.Errorf("LogEntry(%q) error = nil, want one", bad)
		}
	}
}

// TestLogReceipts: LogReceipts serves each record's stored receipt in log
// order, byte for byte, so every entry of a bundle is LogEntry of the
// receipt at the same index; runs the log does not hold yet are
// ErrNotFound, and bad arguments ErrInvalidArgument. A file whose log was
// written before the record → verification id index existed gets it at
// open.
func TestLogReceipts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	s, err := OpenBolt(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("OpenBolt() error = %v", err)
	}
	ctx := context.Background()
	var vs []Verdict
	for i := range 300 {
		// Stored out of time order: the log's order is the store's.
		vs = append(vs, testVerdict(fmt.Sprintf("r-%03d", i), "agent-a", i%3 > 0, t0.Add(time.Duration(300-i)*time.Second)))
	}
	putAll(t, s, vs)
	check := func(s *Bolt) {
		t.Helper()
		for _, c := range []struct {
			first int64
			count int
		}{{0, 256}, {256, 44}, {10, 1}, {299, 1}} {
			got, err := s.LogReceipts(ctx, c.first, c.count)
			if err != nil || len(got) != c.count {
				t.Fatalf("LogReceipts(%d, %d) = %d receipts, %v; want %d", c.first, c.count, len(got), err, c.count)
			}
			bundle, err := s.LogEntries(ctx, c.first>>TileHeight, int(c.first)%256+c.count)
			if err != nil {
				t.Fatalf("LogEntries() error = %v", err)
			}
			for i, r := range got {
				want := vs[c.first+int64(i)].Receipt
				if string(r) != string(want) {
					t.Fatalf("LogReceipts(%d, %d)[%d] = %s, want %s", c.first, c.count, i, r, want)
				}
				at := (int(c.first)%256 + i) * 34
				if e := wantLogEntry(t, r); string(bundle[at+2:at+34]) != string(e[:]) {
					t.Fatalf("receipt of record %d does not hash to its entry", c.first+int64(i))
				}
			}
		}
		for _, c := range []struct {
			first int64
			count int
			want  error
		}{{256, 45, ErrNotFound}, {300, 1, ErrNotFound}, {0, 0, ErrInvalidArgument}, {0, 257, ErrInvalidArgument}, {-1, 1, ErrInvalidArgument}} {
			if _, err := s.LogReceipts(ctx, c.first, c.count); !errors.Is(err, c.want) {
				t.Errorf("LogReceipts(%d, %d) error = %v, want %v", c.first, c.count, err, c.want)
			}
		}
	}
	check(s)
	// A record whose entry names no verdict is reported, not served.
	if err := s.db.Update(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketLogEntries)
		return entries.Put(encodeUint64(10), bytes.Clone(entries.Get(encodeUint64(10))[:sha256.Size]))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LogReceipts(ctx, 10, 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("LogReceipts() of an entry without its id: %v, want ErrCorrupt", err)
	}
	if _, err := s.LogReceipts(ctx, 11, 1); err != nil {
		t.Errorf("LogReceipts() of the next record: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// oldLogIDsLayout rewrites the log of the file at path in a layout that
// files written before the verification ids moved into log_entries have:
// the entries of records from on bare 32 bytes, and every record's id in a
// log_ids bucket when withIDs (a binary of that layout filled log_ids at
// open and appended bare entries).
func oldLogIDsLayout(t *testing.T, path string, from uint64, withIDs bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		var ids *bolt.Bucket
		if withIDs {
			if ids, err = tx.CreateBucket(bucketLogIDs); err != nil {
				return err
			}
		}
		entries := tx.Bucket(bucketLogEntries)
		type record struct{ index, entry, id []byte }
		var records []record
		err := entries.ForEach(func(index, value []byte) error {
			records = append(records, record{bytes.Clone(index), bytes.Clone(value[:sha256.Size]), bytes.Clone(value[sha256.Size:])})
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range records {
			if binary.BigEndian.Uint64(r.index) >= from {
				if err := entries.Put(r.index, r.entry); err != nil {
					return err
				}
			}
			if ids != nil {
				if err := ids.Put(r.index, r.id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("writing the old layout: %v", err)
	}
}

// TestLogEntryIDsMovedIntoEntries: a file whose log_entries hold bare
// 32-byte entries — with the verification ids in a log_ids bucket, without
// them (written before log_ids), or appended to by a binary of that layout
// after this one — has every entry given its verdict's id at open:
// receipts are served in log order, every verdict keeps its index and
// proof, log_ids is gone, and new verdicts are logged after them. A log
// index that misses a record is reported at open, not left without an id.
func TestLogEntryIDsMovedIntoEntries(t *testing.T) {
	for _, c := range []struct {
		name      string
		from      uint64
		withIDs   bool
		dropIndex bool
	}{
		{name: "log_ids", withIDs: true},
		{name: "no ids"},
		{name: "old binary appended", from: 30, withIDs: true},
		{name: "index misses a record", dropIndex: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "verifier.db")
			s, err := OpenBolt(path, &Options{NoSync: true})
			if err != nil {
				t.Fatalf("OpenBolt() error = %v", err)
			}
			var vs []Verdict
			for i := range 40 {
				vs = append(vs, testVerdict(fmt.Sprintf("ids-%02d", 39-i), "agent-a", i%4 > 0, t0.Add(time.Duration(i)*time.Second)))
			}
			putAll(t, s, vs)
			if c.dropIndex {
				err := s.db.Update(func(tx *bolt.Tx) error {
					k, _ := tx.Bucket(bucketLogIndex).Cursor().First()
					return tx.Bucket(bucketLogIndex).Delete(k)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			oldLogIDsLayout(t, path, c.from, c.withIDs)
			s, err = OpenBolt(path, &Options{NoSync: true})
			if c.dropIndex {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("OpenBolt() with a record missing from the index: %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("reopen error = %v", err)
			}
			defer s.Close()
			got, err := s.LogReceipts(ctx, 0, len(vs))
			if err != nil {
				t.Fatalf("LogReceipts() after the move: %v", err)
			}
			for i, r := range got {
				if string(r) != string(vs[i].Receipt) {
					t.Fatalf("LogReceipts()[%d] = %s, want %s", i, r, vs[i].Receipt)
				}
			}
			err = s.db.View(func(tx *bolt.Tx) error {
				if tx.Bucket(bucketLogIDs) != nil {
					t.Errorf("bucket %s is left after the move", bucketLogIDs)
				}
				return tx.Bucket(bucketLogEntries).ForEach(func(index, value []byte) error {
					i := binary.BigEndian.Uint64(index)
					if want := vs[i].VerificationID; string(value[sha256.Size:]) != want {
						t.Errorf("log entry %d names %q, want %q", i, value[sha256.Size:], want)
					}
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			checkLogged(t, s, vs)
			more := testVerdict("ids-new", "agent-a", true, t0.Add(time.Hour))
			put(t, s, more)
			checkLogged(t, s, append(vs, more))
			if got, err := s.LogReceipts(ctx, int64(len(vs)), 1); err != nil || string(got[0]) != string(more.Receipt) {
				t.Errorf("LogReceipts() of the new verdict = %s, %v", got, err)
			}
		})
	}
}

// TestScoreNamesItsLogTree: a score carries the log tree of the snapshot
// it was computed from — also for agents without history and through the
// shared store's socket — and replaying the agent's verdicts in log
// order through ScoreTally gives the store's numbers exactly.
func TestScoreNamesItsLogTree(t *testing.T) {
	owner, client, _ := ownerAndClient(t)
	ctx := context.Background()
	var vs []Verdict
	for i := range 40 {
		agent := []string{"agent-1", "agent-2", "test-x"}[i%3]
		vs = append(vs, testVerdict(fmt.Sprintf("s-%02d", i), agent, i%4 > 0, t0.Add(time.Duration(i*i)*time.Hour)))
	}
	put(t, client, vs...)
	tree, err := owner.LogTree(ctx)
	if err != nil || tree.Size != int64(len(vs)) {
		t.Fatalf("LogTree() = %+v, %v", tree, err)
	}
	now := t0.Add(2000 * time.Hour)
	for _, agent := range []string{"agent-1", "test-x", "never-seen"} {
		for name, st := range map[string]*Shared{"owner": owner, "client": client} {
			sc, err := st.Score(ctx, agent, now)
			if err != nil {
				t.Fatalf("%s Score(%s) error = %v", name, agent, err)
			}
			if sc.Log == nil || *sc.Log != tree {
				t.Errorf("%s Score(%s).Log = %+v, want %+v", name, agent, sc.Log, tree)
			}
		}
	}
	var tally ScoreTally
	for _, v := range vs {
		if v.AgentID == "agent-1" {
			tally.Add(v.VerifiedAt, v.Result == ResultPass)
		}
	}
	want, err := owner.Score(ctx, "agent-1", now)
	if err != nil {
		t.Fatal(err)
	}
	got := tally.Score("agent-1", now)
	if !cmp.Equal(got.Inputs, want.Inputs) || got.Score != want.Score || got.Interval != want.Interval || !got.HasHistory {
		t.Errorf("ScoreTally = %+v, %v, %v; want the store's %+v, %v, %v", got.Inputs, got.Score, got.Interval, want.Inputs, want.Score, want.Interval)
	}
	receipts, err := client.LogReceipts(ctx, 0, len(vs))
	if err != nil || len(receipts) != len(vs) {
		t.Fatalf("client LogReceipts() = %d, %v", len(receipts), err)
	}
	for i, r := range receipts {
		if string(r) != string(vs[i].Receipt) {
			t.Errorf("client LogReceipts()[%d] = %s, want %s", i, r, vs[i].Receipt)
		}
	}
}

// TestLogOfSeesThroughInstrumented: the metrics wrapper hides no log.
func TestLogOfSeesThroughInstrumented(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	put(t, s, testVerdict("i-1", "agent-a", true, t0))
	l, ok := LogOf(Instrumented(s, "bbolt", &opLog{}))
	if !ok {
		t.Fatal("LogOf(instrumented bbolt) found no log")
	}
	if tree, err := l.LogTree(context.Background()); err != nil || tree.Size != 1 {
		t.Errorf("LogTree() through the wrapper = %+v, %v; want size 1", tree, err)
	}
}

// TestVerifyChecksTheLog: Verify accepts a log that holds exactly the
// stored verdicts and names each way one can drift from them — a changed
// entry, a record naming another verdict, a missing index, a changed stored
// hash, a record too many.
func TestVerifyChecksTheLog(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tamper func(tx *bolt.Tx) error
	}{
		{"entry changed", func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketLogEntries)
			v := bytes.Clone(b.Get(encodeUint64(1)))
			v[0] ^= 1
			return b.Put(encodeUint64(1), v)
		}},
		{"record names another verdict", func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketLogEntries)
			one, two := bytes.Clone(b.Get(encodeUint64(1))), bytes.Clone(b.Get(encodeUint64(2)))
			if err := b.Put(encodeUint64(1), append(one[:32], two[32:]...)); err != nil {
				return err
			}
			return b.Put(encodeUint64(2), append(two[:32], one[32:]...))
		}},
		{"index missing", func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketLogIndex).Cursor()
			k, _ := c.First()
			return tx.Bucket(bucketLogIndex).Delete(k)
		}},
		{"stored hash changed", func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketLogHashes)
			k, v := b.Cursor().Last()
			v = bytes.Clone(v)
			v[31] ^= 1
			return b.Put(k, v)
		}},
		{"a record too many", func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketVerdicts)
			k, _ := v.Cursor().First()
			if err := v.Delete(k); err != nil {
				return err
			}
			return tx.Bucket(bucketVerdictIDs).Delete(k[8:])
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t, &Options{NoSync: true})
			var vs []Verdict
			for i := range 5 {
				vs = append(vs, testVerdict(fmt.Sprintf("v-%d", i), "", i%2 == 0, t0.Add(time.Duration(i)*time.Second)))
			}
			put(t, s, vs...)
			if err := s.Verify(context.Background()); err != nil {
				t.Fatalf("Verify(untouched) error = %v", err)
			}
			if err := s.db.Update(tt.tamper); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(context.Background()); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Verify after %s: error = %v, want ErrCorrupt", tt.name, err)
			}
		})
	}
}
