package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/verifier-dev/verifier/internal/bufpool"
)

// schemaVersion is the layout this binary reads and writes (see the package
// documentation). Bump it together with a step in migrate.
const schemaVersion = 2

// Bucket names. Every bucket is created at open.
var (
	bucketMeta       = []byte("meta")
	bucketVerdicts   = []byte("verdicts")
	bucketVerdictIDs = []byte("verdict_ids")
	bucketAgents     = []byte("agents")
	bucketAgentTime  = []byte("agent_time")
	bucketAllowance  = []byte("allowance")
	bucketPayments   = []byte("payments")
	bucketPaymentExp = []byte("payment_exp")

	keySchemaVersion = []byte("schema_version")
)

// allBuckets lists the buckets of the current schema.
func allBuckets() [][]byte {
	return [][]byte{bucketMeta, bucketVerdicts, bucketVerdictIDs, bucketAgents,
		bucketAgentTime, bucketAllowance, bucketPayments, bucketPaymentExp,
		bucketLogHashes, bucketLogIndex, bucketLogEntries, bucketSigningKeys}
}

// Defaults for [Options].
const (
	DefaultTimeout      = time.Second
	DefaultMaxBatchSize = 1000
)

// PaymentRetention is how long a used payment id is kept past its expiry,
// to absorb clock skew between this host and the payer.
const PaymentRetention = time.Hour

// purgeInterval is how often expired allowance days and payment ids are
// deleted while running, besides at open.
const purgeInterval = 10 * time.Minute

// Options configure [OpenBolt]. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// Timeout is how long to wait for the file lock held by another process
	// before failing with ErrLocked. Default DefaultTimeout.
	Timeout time.Duration
	// Now is the clock used for purging expired allowance days and payment
	// ids. Default time.Now.
	Now func() time.Time
	// NoSync skips fsync on commit: verdicts are no longer durable. For
	// benchmarks and tests only.
	NoSync bool
	// MaxBatchSize caps how many concurrent writes share one commit.
	// Default DefaultMaxBatchSize.
	MaxBatchSize int
	// ProbeInterval is how often a write probe — a small write transaction,
	// committed and synced — checks that the file can still be written while
	// no caller writes; Check reports the outcome of the last commit, the
	// probe's or a caller's. Close stops the probe. Zero (the default) means
	// no probe: only callers' writes are reported.
	ProbeInterval time.Duration
	// NoLog stores verdicts without appending them to the transparency
	// log, and without computing their log entries: for measuring what the
	// log costs (BENCHMARKS.md, "Transparency log"); the server never sets
	// it. It is refused on a file whose log holds an entry, where a verdict
	// stored without one would be a hole in a log that answers for every
	// verdict. A file written with NoLog keeps an empty log, and its next
	// open without NoLog appends every stored verdict to it, as for a file
	// written before the log existed.
	NoLog bool

	// writeMode picks the commit strategy; benchmarks compare them.
	writeMode writeMode
}

// writeMode is how writes reach the file.
type writeMode int

const (
	writeGroupCommit writeMode = iota // shared commits without delay (groupCommit)
	writeTxPerWrite                   // one transaction and fsync per write
	writeBoltBatch                    // bbolt's DB.Batch: shared commits after a 10ms timer
)

// Bolt is the embedded [Store]: one bbolt file.
type Bolt struct {
	db        *bolt.DB
	path      string
	now       func() time.Time
	writeMode writeMode
	noLog     bool // Options.NoLog
	group     *groupCommit
	ledger    *allowanceLedger
	nextPurge atomic.Int64          // unix nanos of the next opportunistic purge
	purgeErr  atomic.Pointer[error] // the last purge's failure, nil after a success
	records   *bufpool.Pool         // verdict records, each spare once its write is committed
	health    *writeHealth          // the last commit's outcome
	stopProbe chan struct{}         // closed by Close; nil without a probe
	probeDone chan struct{}         // closed when the probe has stopped
	closeOnce sync.Once
}

var _ Store = (*Bolt)(nil)

// OpenBolt opens or creates the store file at path, creates its buckets,
// migrates an older schema and purges expired entries. A file held by
// another process is ErrLocked after opts.Timeout; a file that is not a
// verifier store is ErrCorrupt; both errors name the file. A file or folder
// that group or others may write is refused first (ErrInsecurePermissions,
// see CheckPermissions).
func OpenBolt(path string, opts *Options) (*Bolt, error) {
	if err := CheckPermissions(path); err != nil {
		return nil, fmt.Errorf("opening store: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBatchSize <= 0 {
		o.MaxBatchSize = DefaultMaxBatchSize
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.Timeout, NoSync: o.NoSync})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("opening store %s: %w (waited %s)", path, ErrLocked, o.Timeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping):
		return nil, fmt.Errorf("opening store %s: %w: %v", path, ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	ledger, health := newAllowanceLedger(), &writeHealth{}
	b := &Bolt{db: db, path: path, now: o.Now, writeMode: o.writeMode, noLog: o.NoLog, ledger: ledger, records: bufpool.New(maxPooledRecord),
		health: health, group: newGroupCommit(db, o.MaxBatchSize, ledger, health)}
	if err := b.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	b.nextPurge.Store(b.now().Add(purgeInterval).UnixNano()) // init purged
	if o.ProbeInterval > 0 {
		b.stopProbe, b.probeDone = make(chan struct{}), make(chan struct{})
		go b.probeLoop(o.ProbeInterval, b.stopProbe, b.probeDone)
	}
	return b, nil
}

// init creates the buckets, checks and migrates the schema version, and
// purges expired entries, all in one transaction. bbolt panics on some
// damaged pages; that becomes ErrCorrupt.
func (b *Bolt) init() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return b.db.Update(func(tx *bolt.Tx) error {
		version, err := readSchemaVersion(tx)
		if err != nil {
			return err
		}
		if version > schemaVersion {
			return fmt.Errorf("%w: file has version %d, this binary knows up to %d",
				ErrSchemaVersion, version, schemaVersion)
		}
		if version == 0 { // a new file: the buckets created below are the whole layout
			version = schemaVersion
		}
		for v := version; v < schemaVersion; v++ {
			if err := migrate(tx, v); err != nil {
				return fmt.Errorf("migrating schema from version %d: %w", v, err)
			}
		}
		for _, name := range allBuckets() {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("creating bucket %s: %w", name, err)
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchemaVersion, encodeUint64(schemaVersion)); err != nil {
			return fmt.Errorf("writing schema version: %w", err)
		}
		if err := migrateLogIndex(tx); err != nil {
			return err
		}
		if b.noLog {
			if err := checkLogEmpty(tx); err != nil {
				return err
			}
		} else if err := logStoredVerdicts(tx); err != nil {
			return err
		}
		if err := migrateLogEntryIDs(tx); err != nil {
			return err
		}
		return purge(tx, b.now())
	})
}

// errStop ends a bbolt ForEach early.
var errStop = errors.New("stop")

// readSchemaVersion returns the file's schema version: 0 for a new, empty
// file. A file with buckets but no version was written by another program.
func readSchemaVersion(tx *bolt.Tx) (uint64, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var foreign []byte
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			foreign = bytes.Clone(name)
			return errStop
		})
		if foreign != nil {
			return 0, fmt.Errorf("%w: unknown bucket %q and no schema version", ErrCorrupt, foreign)
		}
		return 0, nil
	}
	v := meta.Get(keySchemaVersion)
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: schema version missing or malformed", ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}

// Path returns the store file's path.
func (b *Bolt) Path() string { return b.path }

// Close stops the write probe and closes the file. Writes in flight finish
// first, and free calls counted in memory only are written.
func (b *Bolt) Close() error {
	b.closeOnce.Do(func() {
		if b.stopProbe != nil {
			close(b.stopProbe)
			<-b.probeDone
		}
	})
	var flushErr error
	if b.ledger.pending() {
		flushErr = b.group.do(func(*bolt.Tx) error { return nil })
	}
	if err := errors.Join(flushErr, b.db.Close()); err != nil {
		return fmt.Errorf("closing store %s: %w", b.path, err)
	}
	return nil
}

// Check reports whether the store can serve requests: the last commit (a
// caller's write or the write probe) succeeded — else ErrWriteFailing —, the
// last purge of expired entries succeeded, and the file is open with its
// schema version readable.
func (b *Bolt) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.health.err(); err != nil {
		return fmt.Errorf("checking store %s: %w: %w", b.path, ErrWriteFailing, err)
	}
	if err := b.purgeErr.Load(); err != nil {
		return fmt.Errorf("checking store %s: %w", b.path, *err)
	}
	err := b.db.View(func(tx *bolt.Tx) error {
		_, err := readSchemaVersion(tx)
		return err
	})
	if err != nil {
		return fmt.Errorf("checking store %s: %w", b.path, err)
	}
	return nil
}

// write runs fn in a write transaction shared with concurrent writers
// (groupCommit) and returns once it is committed; the commit's outcome is
// recorded for Check. fn may run more than once, each time in a fresh
// transaction, so it must only assign — never accumulate into — variables
// outside it.
func (b *Bolt) write(fn func(*bolt.Tx) error) error {
	switch b.writeMode {
	case writeTxPerWrite:
		return b.health.update(b.db, fn)
	case writeBoltBatch:
		return b.health.batch(b.db, fn)
	}
	return b.group.do(fn)
}

// maybePurge deletes expired allowance days and payment ids at most once per
// purgeInterval, in the calling goroutine. Its failure does not fail the
// call that triggered it (that call's own write is committed); Check reports
// it until a later purge succeeds.
func (b *Bolt) maybePurge() {
	now := b.now()
	next := b.nextPurge.Load()
	if now.UnixNano() < next || !b.nextPurge.CompareAndSwap(next, now.Add(purgeInterval).UnixNano()) {
		return
	}
	var failure *error
	if err := b.health.update(b.db, func(tx *bolt.Tx) error { return purge(tx, now) }); err != nil {
		err = fmt.Errorf("purging expired entries: %w", err)
		failure = &err
	}
	b.purgeErr.Store(failure)
}

func encodeUint64(v uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, v)
}

// checkKey rejects ids that are empty or too long to be a key part.
func checkKey(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty %s", ErrInvalidArgument, what)
	case len(id) > maxIDLen:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalidArgument, what, maxIDLen)
	}
	return nil
}

// maxIDLen bounds every id used in a key (bbolt keys are at most 32 KiB).
const maxIDLen = 1024
