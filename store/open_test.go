package store

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// snapshot is everything a store answers about a scripted history.
type snapshot struct {
	Receipts   map[string]Verdict
	Reputation map[string]Reputation
	Scores     map[string]Score
	Allowance  Allowance
	Replayed   bool
}

func takeSnapshot(t *testing.T, s Store, all []Verdict) snapshot {
	t.Helper()
	ctx := context.Background()
	snap := snapshot{Receipts: map[string]Verdict{}, Reputation: map[string]Reputation{}, Scores: map[string]Score{}}
	for _, v := range all {
		got, err := s.Receipt(ctx, v.VerificationID)
		if err != nil {
			t.Fatalf("Receipt(%s) error = %v", v.VerificationID, err)
		}
		snap.Receipts[v.VerificationID] = got
		if snap.Reputation[v.AgentID], err = s.Reputation(ctx, v.AgentID, Page{Limit: 3}); err != nil {
			t.Fatalf("Reputation(%s) error = %v", v.AgentID, err)
		}
		sc, err := s.Score(ctx, v.AgentID, t0.Add(48*time.Hour))
		if err != nil {
			t.Fatalf("Score(%s) error = %v", v.AgentID, err)
		}
		// The log's tree depends on the order the verdicts were stored in,
		// which a migration or a backfill does not keep: the log tests
		// check Score.Log.
		sc.Log = nil
		snap.Scores[v.AgentID] = sc
	}
	var err error
	if snap.Allowance, err = s.PeekAllowance(ctx, "203.0.113.7", t0, 10); err != nil {
		t.Fatalf("PeekAllowance() error = %v", err)
	}
	first, _, err := s.UsePayment(ctx, "pay-1", t0.Add(time.Hour), PaymentUse{})
	if err != nil {
		t.Fatalf("UsePayment() error = %v", err)
	}
	snap.Replayed = !first
	return snap
}

func TestRestartReadsBackIdentical(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	clock := func() time.Time { return t0 }
	s, err := OpenBolt(path, &Options{Now: clock})
	if err != nil {
		t.Fatalf("OpenBolt() error = %v", err)
	}
	_, all := scriptedHistory()
	put(t, s, all...)
	addExtras(t, s)
	before := takeSnapshot(t, s, all)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}

	s, err = OpenBolt(path, &Options{Now: clock})
	if err != nil {
		t.Fatalf("reopening: OpenBolt() error = %v", err)
	}
	defer s.Close()
	after := takeSnapshot(t, s, all)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("after reopen (-before +after):\n%s", diff)
	}
	if before.Allowance.Remaining != 7 || !after.Replayed {
		t.Errorf("after reopen: allowance remaining %d, payment replayed %v; want 7, true",
			after.Allowance.Remaining, after.Replayed)
	}
	if err := s.Verify(context.Background()); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	s := openTemp(t, nil)
	start := time.Now()
	_, err := OpenBolt(s.Path(), &Options{Timeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second OpenBolt() error = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("error %q does not name the file %s", err, s.Path())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second OpenBolt() took %s, want about the 100ms timeout", d)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("Check() on the first store = %v", err)
	}
}

func TestSecondProcessIsLocked(t *testing.T) {
	s := openTemp(t, nil)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), openChildEnv+"="+s.Path())
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("second process: %v, output %q; want ErrLocked", err, out)
	}
	if !strings.Contains(string(out), s.Path()) || !strings.Contains(string(out), "locked") {
		t.Errorf("second process error %q does not say the file %s is locked", out, s.Path())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("second process took %s", d)
	}
}

// writeFile creates a file in a temporary directory.
func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "verifier.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// foreignBolt is a valid bbolt file of some other program.
func foreignBolt(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("sessions"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// damagedStore is a store whose two meta pages were overwritten.
func damagedStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "verifier.db")
	s, err := OpenBolt(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, testVerdict("d1", "seller", true, t0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 2*os.Getpagesize()), 0); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenCorrupt(t *testing.T) {
	random := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name string
		path func(t *testing.T) string
	}{
		{"short text", func(t *testing.T) string { return writeFile(t, []byte("hello, world\n")) }},
		{"random 64 KiB", func(t *testing.T) string { return writeFile(t, random) }},
		{"JSON document", func(t *testing.T) string { return writeFile(t, bytes.Repeat([]byte(`{"a":1}`), 2000)) }},
		{"other program's bbolt file", foreignBolt},
		{"meta pages overwritten", damagedStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			if err := openRefused(t, path); !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file %s", err, path)
			}
		})
	}
}

func TestOpenNewerSchema(t *testing.T) {
	s := openTemp(t, nil)
	path := s.Path()
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, encodeUint64(schemaVersion+1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = OpenBolt(path, nil)
	if !errors.Is(err, ErrSchemaVersion) || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenBolt(newer schema) error = %v, want ErrSchemaVersion naming %s", err, path)
	}
}

func TestOpenEmptyFileAndMigration(t *testing.T) {
	// An empty file, as left by a crash before bbolt initialised it, and a
	// bbolt file with no buckets (schema version 0) both become a store.
	for name, path := range map[string]string{
		"empty file":   writeFile(t, nil),
		"bbolt, empty": emptyBolt(t),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := OpenBolt(path, nil)
			if err != nil {
				t.Fatalf("OpenBolt() error = %v", err)
			}
			defer s.Close()
			err = s.db.View(func(tx *bolt.Tx) error {
				v, err := readSchemaVersion(tx)
				if v != schemaVersion {
					t.Errorf("schema version = %d, want %d", v, schemaVersion)
				}
				for _, name := range allBuckets() {
					if tx.Bucket(name) == nil {
						t.Errorf("bucket %s missing", name)
					}
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func emptyBolt(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheck(t *testing.T) {
	s, err := OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("Check() on an open store = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err == nil {
		t.Errorf("Check() on a closed store = nil, want an error")
	}
}
