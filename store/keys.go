package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/verifier-dev/verifier/signing"
)

// Keys that live with the data (issue #36): every public key that signs
// receipts kept in a store, and the transparency log's key and origin, are
// recorded in the store itself, so that a store copied to PostgreSQL, and
// every replica on it, publishes them whatever key folder it was started
// with.

// PublicKeySize is the size of a recorded Ed25519 public key.
const PublicKeySize = 32

// maxKeyVersionLen and maxOriginLen bound what a key record names.
const (
	maxKeyVersionLen = 128
	maxOriginLen     = 1024
)

// KeyRecord is a receipt-signing public key recorded in a store: its key
// version, which receipts name, and its 32 raw Ed25519 bytes.
type KeyRecord struct {
	KeyVersion string
	PublicKey  []byte
}

// LogIdentity is a transparency log's identity, recorded on its first use:
// the origin its checkpoints name and the public key (32 raw Ed25519
// bytes) that signs them.
type LogIdentity struct {
	Origin    string
	PublicKey []byte
}

// IsZero reports whether no identity is recorded.
func (l LogIdentity) IsZero() bool { return l.Origin == "" && len(l.PublicKey) == 0 }

// ErrKeyConflict: a key version, or the log, is already recorded with
// another public key.
var ErrKeyConflict = errors.New("already recorded with another public key")

// KeyRecords is kept by every store of this package ([Bolt], [Shared],
// [Postgres]); [KeyRecordsOf] finds it.
type KeyRecords interface {
	// AddSigningKey records k. Recording a key version again with the same
	// key is a no-op; with another key it is ErrKeyConflict, naming both
	// keys' fingerprints.
	AddSigningKey(ctx context.Context, k KeyRecord) error
	// SigningKeys returns every recorded signing key, by key version.
	SigningKeys(ctx context.Context) ([]KeyRecord, error)
	// BindLog returns the log's recorded identity, recording id first when
	// none is: the first process to serve the log fixes its origin and key.
	BindLog(ctx context.Context, id LogIdentity) (LogIdentity, error)
}

// The stores that keep key records: a missing method would make
// KeyRecordsOf answer "none" silently.
var (
	_ KeyRecords = (*Bolt)(nil)
	_ KeyRecords = (*Shared)(nil)
	_ KeyRecords = (*rpcClient)(nil)
	_ KeyRecords = (*Postgres)(nil)
)

// KeyRecordsOf returns st's key records, seeing through [Instrumented]; ok
// is false for a store without them.
func KeyRecordsOf(st Store) (k KeyRecords, ok bool) {
	if in, wrapped := st.(*instrumented); wrapped {
		st = in.st
	}
	k, ok = st.(KeyRecords)
	return k, ok
}

// checkKeyRecord refuses a key record that cannot be stored.
func checkKeyRecord(k KeyRecord) error {
	switch {
	case k.KeyVersion == "" || len(k.KeyVersion) > maxKeyVersionLen || strings.ContainsFunc(k.KeyVersion, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: a key version must be 1 to %d printable bytes", ErrInvalidArgument, maxKeyVersionLen)
	case len(k.PublicKey) != PublicKeySize:
		return fmt.Errorf("%w: a public key of %d bytes, want %d", ErrInvalidArgument, len(k.PublicKey), PublicKeySize)
	}
	return nil
}

// checkLogIdentity refuses a log identity that cannot be stored.
func checkLogIdentity(id LogIdentity) error {
	switch {
	case id.Origin == "" || len(id.Origin) > maxOriginLen:
		return fmt.Errorf("%w: a log origin must be 1 to %d bytes", ErrInvalidArgument, maxOriginLen)
	case len(id.PublicKey) != PublicKeySize:
		return fmt.Errorf("%w: a log public key of %d bytes, want %d", ErrInvalidArgument, len(id.PublicKey), PublicKeySize)
	}
	return nil
}

// keyConflict is the ErrKeyConflict of version, recorded as had, given as
// got.
func keyConflict(version string, had, got []byte) error {
	return fmt.Errorf("key version %q: %w: the store has key %s, this one is %s", version, ErrKeyConflict,
		signing.Fingerprint(had), signing.Fingerprint(got))
}

// Bucket and meta keys of the key records in the bbolt file.
var (
	bucketSigningKeys = []byte("signing_keys") // key version → 32-byte public key
	keyLogOrigin      = []byte("log_origin")   // in meta: the log's origin
	keyLogPublicKey   = []byte("log_key")      // in meta: the log's 32-byte public key
)

// AddSigningKey records k in the file (see [KeyRecords]).
func (b *Bolt) AddSigningKey(ctx context.Context, k KeyRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkKeyRecord(k); err != nil {
		return fmt.Errorf("recording signing key: %w", err)
	}
	var had []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		had = bytes.Clone(tx.Bucket(bucketSigningKeys).Get([]byte(k.KeyVersion)))
		return nil
	})
	if err == nil && had == nil {
		err = b.write(func(tx *bolt.Tx) error {
			keys := tx.Bucket(bucketSigningKeys)
			if had = bytes.Clone(keys.Get([]byte(k.KeyVersion))); had != nil {
				return nil
			}
			return keys.Put([]byte(k.KeyVersion), bytes.Clone(k.PublicKey))
		})
	}
	if err != nil {
		return fmt.Errorf("recording signing key in %s: %w", b.path, err)
	}
	if had != nil && !bytes.Equal(had, k.PublicKey) {
		return fmt.Errorf("recording signing key in %s: %w", b.path, keyConflict(k.KeyVersion, had, k.PublicKey))
	}
	return nil
}

// SigningKeys returns the file's signing keys (see [KeyRecords]).
func (b *Bolt) SigningKeys(ctx context.Context) ([]KeyRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []KeyRecord
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = boltSigningKeys(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading signing keys of %s: %w", b.path, err)
	}
	return out, nil
}

// boltSigningKeys reads the signing keys bucket.
func boltSigningKeys(tx *bolt.Tx) ([]KeyRecord, error) {
	var out []KeyRecord
	err := tx.Bucket(bucketSigningKeys).ForEach(func(k, v []byte) error {
		r := KeyRecord{KeyVersion: string(k), PublicKey: bytes.Clone(v)}
		if err := checkKeyRecord(r); err != nil {
			return fmt.Errorf("%w: signing key record %q: %v", ErrCorrupt, k, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// boltLogIdentity reads the log's identity from the meta bucket; zero when
// none is recorded.
func boltLogIdentity(tx *bolt.Tx) (LogIdentity, error) {
	meta := tx.Bucket(bucketMeta)
	origin, pub := meta.Get(keyLogOrigin), meta.Get(keyLogPublicKey)
	if origin == nil && pub == nil {
		return LogIdentity{}, nil
	}
	id := LogIdentity{Origin: string(origin), PublicKey: bytes.Clone(pub)}
	if err := checkLogIdentity(id); err != nil {
		return LogIdentity{}, fmt.Errorf("%w: log identity: %v", ErrCorrupt, err)
	}
	return id, nil
}

// BindLog returns the file's log identity, recording id when there is
// none (see [KeyRecords]).
func (b *Bolt) BindLog(ctx context.Context, id LogIdentity) (LogIdentity, error) {
	if err := ctx.Err(); err != nil {
		return LogIdentity{}, err
	}
	if err := checkLogIdentity(id); err != nil {
		return LogIdentity{}, fmt.Errorf("recording the log's identity: %w", err)
	}
	var had LogIdentity
	err := b.db.View(func(tx *bolt.Tx) (err error) {
		had, err = boltLogIdentity(tx)
		return err
	})
	if err == nil && had.IsZero() {
		err = b.write(func(tx *bolt.Tx) (err error) {
			if had, err = boltLogIdentity(tx); err != nil || !had.IsZero() {
				return err
			}
			had = LogIdentity{Origin: id.Origin, PublicKey: bytes.Clone(id.PublicKey)}
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(keyLogOrigin, []byte(id.Origin)); err != nil {
				return err
			}
			return meta.Put(keyLogPublicKey, bytes.Clone(id.PublicKey))
		})
	}
	if err != nil {
		return LogIdentity{}, fmt.Errorf("recording the log's identity in %s: %w", b.path, err)
	}
	return had, nil
}

// AddSigningKey records k in the database (see [KeyRecords]).
func (p *Postgres) AddSigningKey(ctx context.Context, k KeyRecord) error {
	if err := checkKeyRecord(k); err != nil {
		return fmt.Errorf("recording signing key: %w", err)
	}
	var had []byte
	err := p.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO signing_keys (key_version, public_key) VALUES ($1, $2)
			ON CONFLICT (key_version) DO NOTHING`, k.KeyVersion, k.PublicKey)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT public_key FROM signing_keys WHERE key_version = $1", k.KeyVersion).Scan(&had)
	})
	if err != nil {
		return fmt.Errorf("recording signing key in %s: %w", p.name, err)
	}
	if !bytes.Equal(had, k.PublicKey) {
		return fmt.Errorf("recording signing key in %s: %w", p.name, keyConflict(k.KeyVersion, had, k.PublicKey))
	}
	return nil
}

// SigningKeys returns the database's signing keys (see [KeyRecords]).
func (p *Postgres) SigningKeys(ctx context.Context) ([]KeyRecord, error) {
	out, err := pgSigningKeys(ctx, p.pool)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	return out, nil
}

// BindLog returns the database's log identity, recording id when there is
// none (see [KeyRecords]); replicas starting at once record one of theirs.
func (p *Postgres) BindLog(ctx context.Context, id LogIdentity) (LogIdentity, error) {
	if err := checkLogIdentity(id); err != nil {
		return LogIdentity{}, fmt.Errorf("recording the log's identity: %w", err)
	}
	var had LogIdentity
	err := p.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO log_identity (id, origin, public_key) VALUES (1, $1, $2)
			ON CONFLICT (id) DO NOTHING`, id.Origin, id.PublicKey)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT origin, public_key FROM log_identity WHERE id = 1").Scan(&had.Origin, &had.PublicKey)
	})
	if err != nil {
		return LogIdentity{}, fmt.Errorf("recording the log's identity in %s: %w", p.name, err)
	}
	return had, nil
}

// copyKeyRecords copies the file's signing keys and log identity into the
// database: a key version the database binds to another key is
// ErrKeyConflict. The file's log identity is recorded when the database
// has none; a database that has one keeps it — its log, which the copied
// verdicts join, is signed under it — and r.LogIdentity says which.
func copyKeyRecords(ctx context.Context, tx *bolt.Tx, to *Postgres, r *CopyReport) error {
	keys, err := boltSigningKeys(tx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := to.AddSigningKey(ctx, k); err != nil {
			return err
		}
	}
	r.SigningKeys = len(keys)
	id, err := boltLogIdentity(tx)
	if err != nil || id.IsZero() {
		return err
	}
	got, err := to.BindLog(ctx, id)
	if err != nil {
		return err
	}
	r.LogIdentity = LogIdentityCopied
	if got.Origin != id.Origin || !bytes.Equal(got.PublicKey, id.PublicKey) {
		r.LogIdentity = LogIdentityKept
	}
	return nil
}

// What [CopyToPostgres] did with the file's log identity (CopyReport's
// LogIdentity; "" when the file records none).
const (
	LogIdentityCopied = "copied"          // the database records the file's origin and log key
	LogIdentityKept   = "database's kept" // the database had another, which its log keeps
)
