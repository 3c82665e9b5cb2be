package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgMigrations are the PostgreSQL schema's steps, NNNN_name.sql, numbered
// from 1 without gaps; the last number is the schema version this binary
// writes.
//
//go:embed pgschema/*.sql
var pgMigrations embed.FS

// pgMigrationLock is the advisory-lock key held while the schema is checked
// and migrated, so that replicas starting at once migrate one at a time
// ("verifier" in ASCII).
const pgMigrationLock int64 = 0x7665726966696572

// pgWriteTimeout bounds a write once started: a write is not abandoned when
// its caller's context ends (as with bbolt, a verdict being stored is
// stored), but a database that does not answer fails it.
const pgWriteTimeout = 30 * time.Second

// DefaultPostgresMaxConns is the connection pool's size unless the URL's
// pool_max_conns sets it.
const DefaultPostgresMaxConns = 16

// PostgresOptions configure [OpenPostgres]. A nil *PostgresOptions, and
// every zero field, means the documented default.
type PostgresOptions struct {
	// Now is the clock used for purging expired allowance days and payment
	// ids. Default time.Now.
	Now func() time.Time
	// ProbeInterval is how often a small write checks that the database
	// still takes writes while no caller writes (see Options.ProbeInterval).
	// Zero means no probe.
	ProbeInterval time.Duration
}

// Postgres is the [Store] kept in a PostgreSQL database, shared by any
// number of processes: every operation is a transaction of its own, so
// replicas behind a balancer see one store — one free allowance per client
// and day, one use of each payment id.
type Postgres struct {
	pool      *pgxpool.Pool
	name      string // host:port/database, for messages (never the password)
	schema    int    // the schema version this binary writes
	now       func() time.Time
	health    *writeHealth
	group     *pgGroupCommit        // PutVerdict's shared transactions
	allowance *pgAllowanceBatch     // ReserveAllowance's shared transactions
	nextPurge atomic.Int64          // unix nanos of the next opportunistic purge
	purgeErr  atomic.Pointer[error] // the last purge's failure, nil after a success
	stopProbe chan struct{}
	probeDone chan struct{}
	closeOnce sync.Once
}

var _ Store = (*Postgres)(nil)

// IsPostgresURL reports whether s names a PostgreSQL database
// (postgres:// or postgresql://) rather than a file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// OpenPostgres connects to the database at url, applies the schema
// migrations it lacks (under an advisory lock, so replicas may start at
// once) and purges expired entries. A database whose schema is newer than
// this binary's is ErrSchemaVersion.
func OpenPostgres(ctx context.Context, url string, opts *PostgresOptions) (*Postgres, error) {
	var o PostgresOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("opening store: parsing the postgres URL: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultPostgresMaxConns
	}
	name := fmt.Sprintf("postgres %s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", name, err)
	}
	p := &Postgres{pool: pool, name: name, now: o.Now, health: &writeHealth{}}
	p.group, p.allowance = newPgGroupCommit(p), newPgAllowanceBatch(p)
	if p.schema, err = p.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("opening store %s: %w", name, err)
	}
	if err := p.purge(ctx, p.now()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("opening store %s: %w", name, err)
	}
	p.nextPurge.Store(p.now().Add(purgeInterval).UnixNano())
	if o.ProbeInterval > 0 {
		p.stopProbe, p.probeDone = make(chan struct{}), make(chan struct{})
		go p.probeLoop(o.ProbeInterval)
	}
	return p, nil
}

// pgMigration is one schema step.
type pgMigration struct {
	version int
	name    string
	sql     string
}

// loadPgMigrations reads the embedded steps in order.
func loadPgMigrations() ([]pgMigration, error) {
	entries, err := fs.ReadDir(pgMigrations, "pgschema")
	if err != nil {
		return nil, err
	}
	var out []pgMigration
	for i, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want number %04d", e.Name(), i+1)
		}
		sql, err := pgMigrations.ReadFile(path.Join("pgschema", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, pgMigration{version: v, name: e.Name(), sql: string(sql)})
	}
	return out, nil
}

// PostgresSchemaVersion is the schema version this binary writes.
func PostgresSchemaVersion() int {
	steps, err := loadPgMigrations()
	if err != nil {
		return 0
	}
	return len(steps)
}

// migrate applies the steps the database lacks, each in a transaction of
// its own, holding the migration lock so that one process migrates while
// the others wait and then find the schema current. It returns the schema
// version, this binary's.
func (p *Postgres) migrate(ctx context.Context) (int, error) {
	steps, err := loadPgMigrations()
	if err != nil {
		return 0, fmt.Errorf("reading the embedded migrations: %w", err)
	}
	return len(steps), p.migrateSteps(ctx, steps)
}

// migrateSteps applies steps past the database's version under the lock.
func (p *Postgres) migrateSteps(ctx context.Context, steps []pgMigration) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", pgMigrationLock); err != nil {
		return fmt.Errorf("taking the migration lock: %w", err)
	}
	defer func() {
		// Ending the session would release the lock too; a failed unlock
		// closes the connection instead of returning it to the pool locked.
		if _, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", pgMigrationLock); err != nil {
			_ = conn.Conn().Close(context.Background())
		}
	}()
	_, err = conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`)
	if err != nil {
		return fmt.Errorf("creating schema_version: %w", err)
	}
	current, err := readPgSchemaVersion(ctx, conn)
	if err != nil {
		return err
	}
	if current > len(steps) {
		return fmt.Errorf("%w: the database has schema version %d, this binary knows up to %d: run a newer verifier against it",
			ErrSchemaVersion, current, len(steps))
	}
	for _, step := range steps[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, step.sql); err != nil {
				return err
			}
			if hook := pgMigrationHooks[step.version]; hook != nil {
				if err := hook(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_version (version) VALUES ($1)", step.version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrating schema to version %d (%s): %w", step.version, step.name, err)
		}
	}
	return nil
}

// pgQuerier is a connection, a pool or a transaction.
type pgQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readPgSchemaVersion returns the database's schema version (0: none).
func readPgSchemaVersion(ctx context.Context, q pgQuerier) (int, error) {
	var v int
	if err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// Close stops the write probe and closes the connections.
func (p *Postgres) Close() error {
	p.closeOnce.Do(func() {
		if p.stopProbe != nil {
			close(p.stopProbe)
			<-p.probeDone
		}
		p.pool.Close()
	})
	return nil
}

// Check reports whether the store can serve requests: the last write (a
// caller's or the probe's) succeeded — else ErrWriteFailing —, the last
// purge succeeded, and the database answers with a schema this binary
// knows (a newer binary may have migrated it since: ErrSchemaVersion).
func (p *Postgres) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.health.err(); err != nil {
		return fmt.Errorf("checking store %s: %w: %w", p.name, ErrWriteFailing, err)
	}
	if err := p.purgeErr.Load(); err != nil {
		return fmt.Errorf("checking store %s: %w", p.name, *err)
	}
	v, err := readPgSchemaVersion(ctx, p.pool)
	if err != nil {
		return fmt.Errorf("checking store %s: %w", p.name, err)
	}
	if v != p.schema {
		return fmt.Errorf("checking store %s: %w: the database has schema version %d, this binary %d", p.name, ErrSchemaVersion, v, p.schema)
	}
	return nil
}

// writeContext is the context of a write that has started: not cancelled
// with the caller's, bounded by pgWriteTimeout.
func writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), pgWriteTimeout)
}

// write runs fn in a transaction and returns once it is committed; the
// outcome is recorded for Check unless fn refused the caller's data (a
// duplicate, an unknown payment), which says nothing about the database.
func (p *Postgres) write(ctx context.Context, fn func(context.Context, pgx.Tx) error) error {
	wctx, cancel := writeContext(ctx)
	defer cancel()
	err := pgx.BeginFunc(wctx, p.pool, func(tx pgx.Tx) error { return fn(wctx, tx) })
	p.recordWrite(err)
	return err
}

// recordWrite keeps a write's outcome for Check.
func (p *Postgres) recordWrite(err error) {
	if err != nil && isCallerError(err) {
		return
	}
	p.health.record(err)
}

// isCallerError reports whether err is the store refusing what it was
// given rather than the database failing.
func isCallerError(err error) bool {
	for _, e := range []error{ErrDuplicate, ErrNotFound, ErrInvalidArgument, ErrInvalidVerdict, ErrInvalidPage} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// purge deletes allowance days before now's and payment ids whose
// retention ended before now.
func (p *Postgres) purge(ctx context.Context, now time.Time) error {
	return p.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM allowance WHERE day < $1", utcDay(now)); err != nil {
			return fmt.Errorf("purging allowance: %w", err)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM payments WHERE deadline_ns < $1", now.UnixNano()); err != nil {
			return fmt.Errorf("purging payments: %w", err)
		}
		return nil
	})
}

// maybePurge purges at most once per purgeInterval per process, in the
// calling goroutine; a failure is reported by Check until a purge succeeds.
func (p *Postgres) maybePurge(ctx context.Context) {
	now := p.now()
	next := p.nextPurge.Load()
	if now.UnixNano() < next || !p.nextPurge.CompareAndSwap(next, now.Add(purgeInterval).UnixNano()) {
		return
	}
	var failure *error
	if err := p.purge(ctx, now); err != nil {
		err = fmt.Errorf("purging expired entries: %w", err)
		failure = &err
	}
	p.purgeErr.Store(failure)
}

// probeLoop writes the probe row every interval until Close.
func (p *Postgres) probeLoop(interval time.Duration) {
	defer close(p.probeDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stopProbe:
			return
		case <-t.C:
			_ = p.write(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx,
					"INSERT INTO write_probe (id, at) VALUES (1, now()) ON CONFLICT (id) DO UPDATE SET at = now()")
				return err
			})
		}
	}
}

// utcDay is the UTC date of t, as the allowance table's day.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
