package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/store/storetest"
)

// testSigner is a receipt signer of a fixed seed byte.
func testSigner(t testing.TB, version string, b byte) *signing.Signer {
	t.Helper()
	s, err := signing.NewSigner(version, bytes.Repeat([]byte{b}, signing.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedVerdict is storetest.Verdict with a receipt signed by s.
func signedVerdict(t testing.TB, s *signing.Signer, id string, at time.Time) store.Verdict {
	t.Helper()
	v := storetest.Verdict(id, "seller-k", true, at)
	ts := at.UTC().Format("2006-01-02T15:04:05.000000Z")
	receipt, err := s.Sign(signing.ContextVerify, fmt.Appendf(nil, `{"verification_id":%q,"result":"pass","verified_at":%q}`, id, ts), ts)
	if err != nil {
		t.Fatal(err)
	}
	v.Receipt, v.KeyVersion = receipt, s.KeyVersion()
	return v
}

func keyRecord(s *signing.Signer) store.KeyRecord {
	k := s.Keys()[s.KeyVersion()]
	return store.KeyRecord{KeyVersion: s.KeyVersion(), PublicKey: k}
}

// keyStores are the backends key records are kept in: bbolt, the shared
// file seen from a second process's client (the rpc socket), and
// PostgreSQL.
func keyStores(t *testing.T) map[string]func(t *testing.T) store.KeyRecords {
	return map[string]func(t *testing.T) store.KeyRecords{
		"bolt": func(t *testing.T) store.KeyRecords {
			b, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			return b
		},
		"shared-client": func(t *testing.T) store.KeyRecords {
			path := filepath.Join(t.TempDir(), "verifier.db")
			owner, err := store.OpenShared(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = owner.Close() })
			client, err := store.OpenShared(path, &store.SharedOptions{Wait: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = client.Close() })
			if own, _ := client.Owner(); own {
				t.Fatal("the second Shared owns the file")
			}
			return client
		},
		"postgres": func(t *testing.T) store.KeyRecords { return openPostgres(t, pgtest.NewDatabase(t)) },
	}
}

// TestKeyRecords: a signing key is recorded once, recorded again as a
// no-op, and a key version already bound to another key is refused
// (ErrKeyConflict); the log's identity is fixed by the first BindLog and
// later ones get it back, whatever they offer.
func TestKeyRecords(t *testing.T) {
	ctx := context.Background()
	for name, open := range keyStores(t) {
		t.Run(name, func(t *testing.T) {
			kr := open(t)
			a, b := testSigner(t, "v1-2026-11a", 1), testSigner(t, "env-0000aaaa", 2)
			for _, k := range []store.KeyRecord{keyRecord(a), keyRecord(b), keyRecord(a)} {
				if err := kr.AddSigningKey(ctx, k); err != nil {
					t.Fatalf("AddSigningKey(%s) error = %v", k.KeyVersion, err)
				}
			}
			other := testSigner(t, "v1-2026-11a", 3) // the same version, another key
			err := kr.AddSigningKey(ctx, keyRecord(other))
			if !errors.Is(err, store.ErrKeyConflict) || !strings.Contains(err.Error(), "v1-2026-11a") {
				t.Errorf("AddSigningKey(same version, other key) error = %v, want ErrKeyConflict naming the version", err)
			}
			got, err := kr.SigningKeys(ctx)
			if err != nil || len(got) != 2 || got[0].KeyVersion != "env-0000aaaa" || got[1].KeyVersion != "v1-2026-11a" ||
				!bytes.Equal(got[1].PublicKey, keyRecord(a).PublicKey) {
				t.Errorf("SigningKeys() = %+v, %v; want the two keys recorded first, by version", got, err)
			}
			first := store.LogIdentity{Origin: "a.example/log", PublicKey: bytes.Repeat([]byte{7}, 32)}
			second := store.LogIdentity{Origin: "127.0.0.1:9999/log", PublicKey: bytes.Repeat([]byte{8}, 32)}
			for i, offer := range []store.LogIdentity{first, second} {
				id, err := kr.BindLog(ctx, offer)
				if err != nil || id.Origin != first.Origin || !bytes.Equal(id.PublicKey, first.PublicKey) {
					t.Errorf("BindLog #%d = %+v, %v; want the first identity", i+1, id, err)
				}
			}
			if err := kr.AddSigningKey(ctx, store.KeyRecord{KeyVersion: "v2", PublicKey: []byte("short")}); !errors.Is(err, store.ErrInvalidArgument) {
				t.Errorf("AddSigningKey(short key) error = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// TestCopyToPostgresCarriesKeys: store copy records the file's signing
// keys and log identity in the database, and refuses (before copying a
// verdict) a database that binds one of its key versions to another key.
func TestCopyToPostgresCarriesKeys(t *testing.T) {
	ctx := context.Background()
	from, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{Now: fixedNow, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	a := testSigner(t, "v1-2026-11a", 1)
	if err := from.AddSigningKey(ctx, keyRecord(a)); err != nil {
		t.Fatal(err)
	}
	logID := store.LogIdentity{Origin: "old.example/log", PublicKey: bytes.Repeat([]byte{9}, 32)}
	if _, err := from.BindLog(ctx, logID); err != nil {
		t.Fatal(err)
	}
	storetest.Put(t, from, signedVerdict(t, a, "k1", storetest.T0))

	to := openPostgres(t, pgtest.NewDatabase(t))
	r, err := store.CopyToPostgres(ctx, from, to, 5)
	if err != nil || r.SigningKeys != 1 || r.Verdicts != 1 || r.LogIdentity != store.LogIdentityCopied {
		t.Fatalf("CopyToPostgres() = %+v, %v; want 1 key, 1 verdict and the log identity copied", r, err)
	}
	keys, err := to.SigningKeys(ctx)
	if err != nil || len(keys) != 1 || !bytes.Equal(keys[0].PublicKey, keyRecord(a).PublicKey) {
		t.Errorf("database's SigningKeys() = %+v, %v; want the file's key", keys, err)
	}
	if id, err := to.BindLog(ctx, store.LogIdentity{Origin: "new.example/log", PublicKey: bytes.Repeat([]byte{1}, 32)}); err != nil || id.Origin != logID.Origin {
		t.Errorf("database's log identity = %+v, %v; want the file's", id, err)
	}
	if err := to.Verify(ctx); err != nil {
		t.Errorf("Verify() of the copy = %v", err)
	}

	// A database whose replicas already serve a log of their own keeps it:
	// the copied verdicts join that log.
	served := openPostgres(t, pgtest.NewDatabase(t))
	theirs := store.LogIdentity{Origin: "replicas.example/log", PublicKey: bytes.Repeat([]byte{4}, 32)}
	if _, err := served.BindLog(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if r, err := store.CopyToPostgres(ctx, from, served, 5); err != nil || r.LogIdentity != store.LogIdentityKept || r.Verdicts != 1 {
		t.Errorf("copy into a database serving its own log = %+v, %v; want the verdict copied and the database's identity kept", r, err)
	}
	if id, err := served.BindLog(ctx, logID); err != nil || id.Origin != theirs.Origin {
		t.Errorf("after the copy the database's log identity = %+v, %v; want its own", id, err)
	}

	conflicting := openPostgres(t, pgtest.NewDatabase(t))
	if err := conflicting.AddSigningKey(ctx, keyRecord(testSigner(t, "v1-2026-11a", 2))); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CopyToPostgres(ctx, from, conflicting, 5); !errors.Is(err, store.ErrKeyConflict) {
		t.Errorf("copy into a database binding v1-2026-11a to another key: error = %v, want ErrKeyConflict", err)
	}
	if tree, err := conflicting.LogTree(ctx); err != nil || tree.Size != 0 {
		t.Errorf("after the refused copy the database's log = %+v, %v; want nothing copied", tree, err)
	}
}

// TestVerifyFindsTampering: Verify passes a store whose receipts all verify
// under their recorded keys and reports, on both backends, a changed
// receipt and a receipt whose key version no record holds.
func TestVerifyFindsTampering(t *testing.T) {
	ctx := context.Background()
	a := testSigner(t, "v1-2026-11a", 1)
	stray := testSigner(t, "v9-2026-11a", 5)

	t.Run("bolt", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "verifier.db")
		b, err := store.OpenBolt(path, &store.Options{Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddSigningKey(ctx, keyRecord(a)); err != nil {
			t.Fatal(err)
		}
		storetest.Put(t, b, signedVerdict(t, a, "k1", storetest.T0), signedVerdict(t, a, "k2", storetest.T0.Add(time.Second)))
		if err := b.Verify(ctx); err != nil {
			t.Fatalf("Verify() of an untouched file = %v", err)
		}
		storetest.Put(t, b, signedVerdict(t, stray, "k3", storetest.T0.Add(2*time.Second)))
		if err := b.Verify(ctx); !errors.Is(err, store.ErrKeyRecords) || !strings.Contains(err.Error(), "v9-2026-11a") {
			t.Errorf("Verify() with a receipt of an unrecorded key = %v, want ErrKeyRecords naming v9-2026-11a", err)
		}
		_ = b.Close()
		// Flip the result inside k1's stored receipt, as a hand edit would.
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			bk := tx.Bucket([]byte("verdicts"))
			c := bk.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if bytes.HasSuffix(k, []byte("k1")) {
					return bk.Put(bytes.Clone(k), bytes.Replace(bytes.Clone(v), []byte(`"result":"pass","verified_at"`), []byte(`"result":"fail","verified_at"`), 1))
				}
			}
			return errors.New("k1 not found")
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, err = store.OpenBolt(path, &store.Options{Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		err = b.Verify(ctx)
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "k1") {
			t.Errorf("Verify() of a changed receipt = %v, want ErrCorrupt naming k1", err)
		}
	})

	t.Run("postgres", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		p := openPostgres(t, url)
		if err := p.AddSigningKey(ctx, keyRecord(a)); err != nil {
			t.Fatal(err)
		}
		storetest.Put(t, p, signedVerdict(t, a, "k1", storetest.T0), signedVerdict(t, a, "k2", storetest.T0.Add(time.Second)))
		if err := p.Verify(ctx); err != nil {
			t.Fatalf("Verify() of an untouched database = %v", err)
		}
		execSQL(t, url, `UPDATE verdicts SET record = overlay(record placing '"fail"'::bytea
			from position('"pass","verified_at"'::bytea in record) for 6) WHERE verification_id = 'k2'::bytea`)
		err := p.Verify(ctx)
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "k2") {
			t.Errorf("Verify() of a changed receipt = %v, want ErrCorrupt naming k2", err)
		}
		execSQL(t, url, `UPDATE log_head SET size = size - 1`)
		if err := p.Verify(ctx); err == nil || !strings.Contains(err.Error(), "log") {
			t.Errorf("Verify() of a cut log head = %v, want a log finding", err)
		}
	})
}
