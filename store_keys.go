package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// keyRecordTimeout bounds the store calls that record keys at start.
const keyRecordTimeout = 30 * time.Second

// recordSigningKeys records every public key of keys in st (issue #36):
// the store then publishes them, so receipts signed by this process keep
// verifying on every replica, and after the store is copied elsewhere. A
// key version the store already binds to another key refuses the start,
// naming the fix.
func recordSigningKeys(ctx context.Context, st store.Store, keys *signing.KeyStore) error {
	kr, ok := store.KeyRecordsOf(st)
	if !ok {
		return nil
	}
	// Recorded even when the start is being cancelled: a key that signs
	// must be in the store first.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyRecordTimeout)
	defer cancel()
	for _, pk := range keys.PublicKeys() {
		pub, _ := keys.Lookup(pk.KeyVersion)
		err := kr.AddSigningKey(ctx, store.KeyRecord{KeyVersion: pk.KeyVersion, PublicKey: pub})
		if errors.Is(err, store.ErrKeyConflict) {
			return fmt.Errorf("%w. Fix: every process on one store must sign a key version with one key: give them all the same VERIFIER_SIGNING_KEY, "+
				"or copy the keys/ folder of the process that made %s to this one's --data-dir; "+
				"a new key (keys rotate, or another VERIFIER_SIGNING_KEY) is added to the store's keys under a version of its own", err, pk.KeyVersion)
		}
		if errors.Is(err, store.ErrNotSupported) {
			return nil // an older owner of the data dir: nothing is recorded until this process owns it
		}
		if err != nil {
			return fmt.Errorf("recording this process's signing keys in the store: %w", err)
		}
	}
	return nil
}

// bindLogKey fixes key to the identity of st's transparency log: the first
// process to serve the log records its origin and key in the store; every
// later one signs under that origin, whatever its public URL, and must
// hold the same key, else the start is refused with the fix. envKey says
// the key came from VERIFIER_LOG_KEY (else from the log.key file in
// dataDir).
func bindLogKey(ctx context.Context, st store.Store, key *signing.LogKey, envKey bool, dataDir string, log *slog.Logger) (*signing.LogKey, error) {
	kr, ok := store.KeyRecordsOf(st)
	if !ok {
		return key, nil
	}
	ctx, cancel := context.WithTimeout(ctx, keyRecordTimeout)
	defer cancel()
	id, err := kr.BindLog(ctx, store.LogIdentity{Origin: key.Name(), PublicKey: key.PublicKey()})
	if errors.Is(err, store.ErrNotSupported) {
		log.Warn("the verifier process owning this data dir's store is older: the log's origin and key are not recorded", "err", err)
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recording the transparency log's key in the store: %w", err)
	}
	if !bytes.Equal(id.PublicKey, key.PublicKey()) {
		source := "the log key file " + filepath.Join(dataDir, signing.LogKeyFile)
		if envKey {
			source = "VERIFIER_LOG_KEY"
		}
		return nil, fmt.Errorf("the store's transparency log %q is signed by the log key with fingerprint %s, but this process's log key (%s) has fingerprint %s: "+
			"its checkpoints would not verify under the key the log publishes. Fix: start this process with the log's key — set VERIFIER_LOG_KEY to the base64 seed "+
			"the other processes on this store use (for a store copied from a data dir, the content of that dir's %s) — or give it a store of its own",
			id.Origin, signing.Fingerprint(id.PublicKey), source, signing.Fingerprint(key.PublicKey()), signing.LogKeyFile)
	}
	if id.Origin != key.Name() {
		log.Info("the transparency log keeps the origin recorded in its store when it was first served; this process's URL does not change it",
			"origin", id.Origin, "url_origin", key.Name())
		return key.WithOrigin(id.Origin)
	}
	return key, nil
}

// recentRecords is how many of the log's last records a server checks at
// start (checkRecentRecords): one entry bundle at most.
const recentRecords = 256

// checkRecentRecords is the start's cheap integrity check of st: the last
// records of its log (up to recentRecords, those of its last entry bundle)
// each hash to the stored receipt of their verdict, and, when the store
// records signing keys, each receipt verifies under the key of its
// version. It finds a recent receipt edited in the file or the database;
// `verifier store check` reads the whole history.
func checkRecentRecords(ctx context.Context, st store.Store) error {
	l, ok := store.LogOf(st)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyRecordTimeout)
	defer cancel()
	tree, err := l.LogTree(ctx)
	if err != nil || tree.Size == 0 {
		return err
	}
	bundle := (tree.Size - 1) / recentRecords
	first := bundle * recentRecords
	width := int(tree.Size - first)
	data, err := l.LogEntries(ctx, bundle, width)
	if err != nil {
		return fmt.Errorf("reading the log's last entries: %w", err)
	}
	receipts, err := l.LogReceipts(ctx, first, width)
	if err != nil {
		return fmt.Errorf("reading the log's last receipts: %w", err)
	}
	keys := signing.Keys{}
	if kr, ok := store.KeyRecordsOf(st); ok {
		records, err := kr.SigningKeys(ctx)
		if err != nil {
			return err
		}
		for _, r := range records {
			keys[r.KeyVersion] = r.PublicKey
		}
	}
	for i, receipt := range receipts {
		if len(data) < 2 || len(data) < 2+int(binary.BigEndian.Uint16(data)) {
			return fmt.Errorf("%w: the log's entry bundle %d is cut short", store.ErrCorrupt, bundle)
		}
		n := 2 + int(binary.BigEndian.Uint16(data))
		entry := data[2:n]
		data = data[n:]
		want, err := store.LogEntry(receipt)
		if err != nil || !bytes.Equal(want[:], entry) {
			return fmt.Errorf("%w: log record %d is not the hash of its stored receipt: a receipt was changed at rest", store.ErrCorrupt, first+int64(i))
		}
		if len(keys) == 0 {
			continue
		}
		// A key version the store does not record (signed before key
		// records existed, by a key no longer at hand) is store check's to
		// report; a receipt of a recorded version must verify.
		if _, err := signing.VerifyReceipt(receipt, keys); err != nil && !errors.Is(err, signing.ErrUnknownKey) {
			return fmt.Errorf("%w: the stored receipt of log record %d does not verify under the store's recorded keys", store.ErrCorrupt, first+int64(i))
		}
	}
	return nil
}
