package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

var update = flag.Bool("update", false, "rewrite testdata/v1-answers.json from a fresh store of the current schema")

// The version 1 store of testdata/v1.db was written by the version 1 code
// (commit c2def4b) through its API: migrationHistory's verdicts, then
// addExtras. testdata/v1-answers.json is what that code answered for it
// (takeSnapshot); -update rewrites it from a fresh store of the current
// schema, never from a migrated one. writeV1Store writes the same entries
// with the version 1 layout spelled out (TestWriteV1StoreMatchesTestdata
// holds it to the file), for larger histories.
const (
	v1File        = "testdata/v1.db"
	v1AnswersFile = "testdata/v1-answers.json"
)

// migrationHistory is the scripted history and 40 verdicts with UUIDv4
// ids: several agents, test agents, no agent, equal times, the earliest
// and latest times a verdict may have, and a time given in another zone.
func migrationHistory() []Verdict {
	_, all := scriptedHistory()
	rng := rand.New(rand.NewPCG(7, 11))
	agents := []string{"seller-a", "seller-c", "test-x", ""}
	for i := range 40 {
		at := t0.Add(time.Duration(rng.IntN(600)) * time.Minute)
		switch i {
		case 0:
			at = minVerifiedAt
		case 1:
			at = maxVerifiedAt.Add(-time.Nanosecond)
		case 2:
			at = at.In(time.FixedZone("UTC-7", -7*3600))
		}
		all = append(all, testVerdict(uuidV4(rng), agents[i%len(agents)], rng.IntN(3) > 0, at))
	}
	return all
}

// uuidV4 formats 16 random bytes of rng as a version 4 UUID.
func uuidV4(rng *rand.Rand) string {
	hi, lo := rng.Uint64(), rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff,
		lo>>48&0x3fff|0x8000, lo&0xffffffffffff)
}

// addExtras stores what the version 1 file holds besides verdicts (and the
// reopen test too): three free calls of one client on t0's day and one
// payment id, through TakeAllowance and UsePayment.
func addExtras(t *testing.T, s *Bolt) {
	t.Helper()
	ctx := context.Background()
	for range 3 {
		if _, err := s.TakeAllowance(ctx, "203.0.113.7", t0, 10); err != nil {
			t.Fatalf("TakeAllowance() error = %v", err)
		}
	}
	if _, _, err := s.UsePayment(ctx, "pay-1", t0.Add(time.Hour), PaymentUse{}); err != nil {
		t.Fatalf("UsePayment() error = %v", err)
	}
}

// writeV1Store writes a schema version 1 store at path holding vs and the
// entries addExtras makes, with the version 1 layout: verdicts keyed by
// verification id, no verdict_ids.
func writeV1Store(t *testing.T, path string, vs []Verdict) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		buckets := map[string]*bolt.Bucket{}
		for _, name := range []string{"meta", "verdicts", "agents", "agent_time", "allowance", "payments", "payment_exp"} {
			b, err := tx.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			buckets[name] = b
		}
		put := func(bucket string, k, v []byte) {
			if err == nil {
				err = buckets[bucket].Put(k, v)
			}
		}
		put("meta", []byte("schema_version"), encodeUint64(1))
		aggs := map[string]*aggregate{}
		for _, v := range vs {
			v.VerifiedAt = v.VerifiedAt.UTC()
			record, e := marshalVerdict(v)
			if e != nil {
				return e
			}
			put("verdicts", []byte(v.VerificationID), record)
			if v.AgentID == "" || IsTestAgent(v.AgentID) {
				continue
			}
			if aggs[v.AgentID] == nil {
				aggs[v.AgentID] = &aggregate{}
			}
			aggs[v.AgentID].add(v.VerifiedAt.UnixNano(), v.Result == ResultPass)
			put("agent_time", indexKey(v.AgentID, v.VerifiedAt.UnixNano(), v.VerificationID), encodeSummary(v))
		}
		for agent, a := range aggs {
			put("agents", []byte(agent), a.encode())
		}
		put("allowance", allowanceKey("203.0.113.7", t0), encodeUint64(3))
		deadline := appendTime(nil, t0.Add(time.Hour+PaymentRetention).UnixNano())
		put("payments", []byte("pay-1"), deadline)
		put("payment_exp", append(bytes.Clone(deadline), "pay-1"...), nil)
		return err
	})
	if err != nil {
		t.Fatalf("writing a version 1 store: %v", err)
	}
}

// copyV1File copies testdata/v1.db to a temporary directory.
func copyV1File(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(v1File)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, data)
}

// dumpBuckets returns every bucket's entries, as strings.
func dumpBuckets(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dump := map[string]map[string]string{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			entries := map[string]string{}
			dump[string(name)] = entries
			return b.ForEach(func(k, v []byte) error {
				entries[string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return dump
}

func TestWriteV1StoreMatchesTestdata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	writeV1Store(t, path, migrationHistory())
	if diff := cmp.Diff(dumpBuckets(t, copyV1File(t)), dumpBuckets(t, path)); diff != "" {
		t.Errorf("writeV1Store differs from %s, written by the version 1 code (-file +writeV1Store):\n%s", v1File, diff)
	}
}

// readAnswers reads testdata/v1-answers.json.
func readAnswers(t *testing.T) snapshot {
	t.Helper()
	data, err := os.ReadFile(v1AnswersFile)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	var want snapshot
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	// The file is indented, receipts too; the receipts of migrationHistory
	// are compact (TestMigrateV1File compares them byte for byte).
	for id, v := range want.Receipts {
		var buf bytes.Buffer
		if err := json.Compact(&buf, v.Receipt); err != nil {
			t.Fatal(err)
		}
		v.Receipt = buf.Bytes()
		want.Receipts[id] = v
	}
	return want
}

// freshAnswers stores vs and addExtras's entries in a new store of the current
// schema and returns its answers.
func freshAnswers(t *testing.T, vs []Verdict) snapshot {
	t.Helper()
	s := openTemp(t, &Options{NoSync: true})
	put(t, s, vs...)
	addExtras(t, s)
	return takeSnapshot(t, s, vs)
}

func TestV1Answers(t *testing.T) {
	got := freshAnswers(t, migrationHistory())
	if *update {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "\t")
		if err := enc.Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(v1AnswersFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A new store answers as the version 1 code did for the same history.
	if diff := cmp.Diff(readAnswers(t), got); diff != "" {
		t.Errorf("fresh store's answers differ from %s (-file +fresh):\n%s", v1AnswersFile, diff)
	}
}

// checkMigrated checks the layout of a store opened from a version 1 file:
// version 2, every verdict under its time and id, the file consistent.
func checkMigrated(t *testing.T, s *Bolt, verdicts int) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		if v, err := readSchemaVersion(tx); err != nil || v != 2 {
			t.Errorf("schema version = %d, %v; want 2", v, err)
		}
		n := 0
		err := tx.Bucket(bucketVerdicts).ForEach(func(k, record []byte) error {
			n++
			v, err := decodeVerdict(record)
			if err != nil {
				return err
			}
			if want := timeKey(v.VerifiedAt.UnixNano(), v.VerificationID); !bytes.Equal(k, want) {
				t.Errorf("verdict %s under key %x, want %x", v.VerificationID, k, want)
			}
			return nil
		})
		if n != verdicts || tx.Bucket(bucketVerdictIDs).Stats().KeyN != verdicts {
			t.Errorf("%d verdicts and %d id entries, want %d of each", n, tx.Bucket(bucketVerdictIDs).Stats().KeyN, verdicts)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(context.Background()); err != nil {
		t.Errorf("Verify() after migration = %v", err)
	}
}

func TestMigrateV1File(t *testing.T) {
	path := copyV1File(t)
	all := migrationHistory()
	s, err := OpenBolt(path, &Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatalf("OpenBolt(version 1 file) error = %v", err)
	}
	defer s.Close()
	checkMigrated(t, s, len(all))
	for _, v := range all {
		got, err := s.Receipt(context.Background(), v.VerificationID)
		want := v
		want.VerifiedAt = v.VerifiedAt.UTC()
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("Receipt(%s) = %+v, %v; want %+v", v.VerificationID, got, err, want)
		}
	}
	// Receipts, reputation pages, scores, the allowance and the payment id:
	// all as the version 1 code answered before the migration.
	if diff := cmp.Diff(readAnswers(t), takeSnapshot(t, s, all)); diff != "" {
		t.Errorf("answers after migration differ from version 1's (-v1 +migrated):\n%s", diff)
	}
	// Writes after the migration, then a reopen that has nothing to migrate.
	more := []Verdict{testVerdict("after-1", "seller-a", true, t0.Add(time.Hour)),
		testVerdict("after-2", "seller-new", false, t0.Add(-time.Hour))}
	put(t, s, more...)
	put(t, s, all[3]) // a stored verdict again: a no-op
	if err := s.PutVerdict(context.Background(), testVerdict(all[3].VerificationID, "seller-a", true, t0.Add(time.Minute))); !errors.Is(err, ErrDuplicate) {
		t.Errorf("PutVerdict(another verdict under a migrated id) error = %v, want ErrDuplicate", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenBolt(path, &Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatalf("reopening: OpenBolt() error = %v", err)
	}
	defer s.Close()
	checkMigrated(t, s, len(all)+len(more))
}

func TestMigrateV1Layout(t *testing.T) {
	// A larger history through the test writer, against a fresh store of
	// the same verdicts.
	rng := rand.New(rand.NewPCG(5, 6))
	all := migrationHistory()
	for i := range 2000 {
		at := t0.Add(time.Duration(rng.IntN(1e6)) * time.Second)
		all = append(all, testVerdict(uuidV4(rng), fmt.Sprintf("seller-%d", i%37), rng.IntN(4) > 0, at))
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	writeV1Store(t, path, all)
	s, err := OpenBolt(path, &Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatalf("OpenBolt(version 1 store) error = %v", err)
	}
	defer s.Close()
	checkMigrated(t, s, len(all))
	if diff := cmp.Diff(freshAnswers(t, all), takeSnapshot(t, s, all)); diff != "" {
		t.Errorf("answers after migration differ from a fresh store's (-fresh +migrated):\n%s", diff)
	}
}

func TestMigrateV1DamagedRecord(t *testing.T) {
	// A record whose verified_at cannot be read cannot be re-keyed: the
	// migration fails, and the file is left as it was.
	path := filepath.Join(t.TempDir(), "v1.db")
	writeV1Store(t, path, migrationHistory())
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketVerdicts).Put([]byte("a-2"), []byte{recordFormat, 2, '{', '}'})
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	openRefused(t, path)
}
