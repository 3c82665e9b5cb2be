package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/mod/sumdb/tlog"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// SocketName is the file, beside the store file, on which the process that
// owns the store serves it to the others (see [Shared]).
const SocketName = "verifier.sock"

// Defaults for [SharedOptions].
const (
	// DefaultSharedWait is how long OpenShared, and a call whose owner went
	// away, try to reach the store before giving up.
	DefaultSharedWait = 5 * time.Second
	// lockPoll is how long one attempt waits for the file lock.
	lockPoll = 100 * time.Millisecond
	// retryPause is the pause between two attempts to reach the store.
	retryPause = 20 * time.Millisecond
	// retryAfterFailure: once reaching the store failed, calls fail at once
	// with that failure for this long before the next attempt.
	retryAfterFailure = time.Second
)

// SharedOptions configure [OpenShared]. A nil *SharedOptions, and every
// zero field, means the documented default.
type SharedOptions struct {
	// Bolt configures the file while this process owns it (its Timeout is
	// not used: each attempt to take the lock waits a tenth of a second).
	Bolt Options
	// Wait is how long to try to reach the store — take the file lock, or
	// connect to the owner's socket — before failing. Default
	// DefaultSharedWait.
	Wait time.Duration
	// Log receives a line each time this process takes over the store
	// after its owner went away. Default: no log.
	Log *slog.Logger
	// CallTimeout bounds a call to the owner whose context has no
	// deadline of its own (a call's deadline always bounds it). Default
	// DefaultCallTimeout.
	CallTimeout time.Duration
}

// Shared is a [Store] that any number of processes open on one file. The
// process holding the file lock (bbolt allows one per file) is the owner:
// it uses the file, and serves the Store on a unix socket beside it
// ([SocketName], mode 0600). Every other process is a client of that
// socket. When the owner goes away, its clients race for the lock: one
// becomes the owner, the others connect to it.
type Shared struct {
	path, sock string
	opts       SharedOptions

	mu       sync.Mutex
	owner    *Bolt      // this process owns the file
	server   *rpcServer // serving owner, when the socket could be made
	client   *rpcClient // another process owns the file
	gen      uint64     // counts changes of backend
	serveErr error      // why the owner serves no socket
	lastErr  error      // the last failure to reach the store
	lastTry  time.Time
	closed   bool
}

var _ Store = (*Shared)(nil)

// OpenShared opens the store file at path as owner or as client of its
// owner, whichever it can within opts.Wait. It fails at once on a file it
// cannot use (ErrCorrupt, ErrSchemaVersion, ErrInsecurePermissions, an
// unwritable folder), and with ErrLocked when the lock is held but no
// process answers on the socket for opts.Wait.
func OpenShared(path string, opts *SharedOptions) (*Shared, error) {
	s := &Shared{path: path, sock: filepath.Join(filepath.Dir(path), SocketName)}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Wait <= 0 {
		s.opts.Wait = DefaultSharedWait
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reach(); err != nil {
		return nil, err
	}
	s.opts.Log = cmp.Or(s.opts.Log, slog.New(slog.DiscardHandler))
	s.opts.CallTimeout = cmp.Or(s.opts.CallTimeout, DefaultCallTimeout)
	return s, nil
}

// reach makes this process the owner, or a client of the owner; s.mu is
// held.
func (s *Shared) reach() error {
	s.lastTry = time.Now()
	deadline := s.lastTry.Add(s.opts.Wait)
	for {
		err := s.tryOwn()
		if err == nil {
			s.lastErr = nil
			return nil
		}
		if !errors.Is(err, ErrLocked) {
			s.lastErr = err
			return err
		}
		c, dialErr := dialStore(s.sock, time.Second, s.opts.CallTimeout)
		if dialErr == nil {
			s.client, s.gen, s.lastErr = c, s.gen+1, nil
			return nil
		}
		if time.Now().After(deadline) {
			s.lastErr = fmt.Errorf("opening store %s: %w, and no verifier process answered on %s for %s (%v): another program, or a verifier older than this one, holds it",
				s.path, ErrLocked, s.sock, s.opts.Wait, dialErr)
			return s.lastErr
		}
		time.Sleep(retryPause)
	}
}

// tryOwn takes the file lock, and serves the store on the socket.
func (s *Shared) tryOwn() error {
	o := s.opts.Bolt
	o.Timeout = lockPoll
	b, err := OpenBolt(s.path, &o)
	if err != nil {
		return err
	}
	s.owner, s.gen = b, s.gen+1
	ln, err := listenSocket(s.sock)
	if err != nil {
		s.serveErr = err
		return nil
	}
	if s.server, err = serveStore(ln, b); err != nil {
		ln.Close()
		_ = os.Remove(s.sock)
		s.serveErr = err
	}
	return nil
}

// listenSocket binds the unix socket at path with mode 0600. Only the lock
// holder calls it, so a socket file already there is a dead owner's and is
// replaced. The socket is made under a temporary name, restricted, then
// renamed into place, so it is never reachable with a wider mode.
func listenSocket(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	_ = os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("serving the store on %s: %w", path, err)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the socket is removed by name on close
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("restricting the socket %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("serving the store on %s: %w", path, err)
	}
	return ln, nil
}

// Path returns the store file's path.
func (s *Shared) Path() string { return s.path }

// Owner reports whether this process owns the store file now, and, when it
// does, why it serves no socket to others (nil when it does).
func (s *Shared) Owner() (owner bool, serveErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner != nil, s.serveErr
}

// backend returns the Store to call, reaching it again when the last owner
// went away.
func (s *Shared) backend() (Store, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, 0, errors.New("the store is closed")
	case s.owner != nil:
		return s.owner, s.gen, nil
	case s.client != nil:
		return s.client, s.gen, nil
	case s.lastErr != nil && time.Since(s.lastTry) < retryAfterFailure:
		return nil, 0, s.lastErr
	}
	if err := s.reach(); err != nil {
		return nil, 0, err
	}
	if s.owner != nil {
		return s.owner, s.gen, nil
	}
	return s.client, s.gen, nil
}

// lost drops the client of generation gen, whose owner went away, and
// reaches the store again: as its new owner, or a client of the new owner.
func (s *Shared) lost(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.client == nil || s.closed {
		return // another call reached it again already
	}
	s.client.Close()
	s.client = nil
	if err := s.reach(); err != nil { // kept in lastErr for the next calls
		s.opts.Log.Error("the verifier process owning the store went away, and the store cannot be reached", "err", err)
		return
	}
	if s.owner != nil {
		s.opts.Log.Info("the verifier process owning the store went away: this process now owns it", "store", s.path, "serve_err", s.serveErr)
	} else {
		s.opts.Log.Info("the verifier process owning the store went away: another process now owns it", "store", s.path)
	}
}

// do runs fn on the backend. When the owner goes away during it, the store
// is reached again and fn runs once more if retry says that is safe (the
// call is idempotent, so running it twice is as running it once), or if
// the owner did not run it (errNotRun) and ctx has time left.
func (s *Shared) do(ctx context.Context, retry bool, fn func(Store) error) error {
	st, gen, err := s.backend()
	if err != nil {
		return err
	}
	err = fn(st)
	notRun := errors.Is(err, errNotRun)
	if !errors.Is(err, ErrOwnerLost) && !notRun {
		return err
	}
	if errors.Is(err, ErrOwnerLost) {
		s.lost(gen)
	}
	if (!retry && !notRun) || ctx.Err() != nil {
		return err
	}
	if st, _, err = s.backend(); err != nil {
		return err
	}
	return fn(st)
}

// PutVerdict stores v; it is retried against the next owner when the owner
// goes away during the call: storing the same verdict twice is a no-op.
func (s *Shared) PutVerdict(ctx context.Context, v Verdict) error {
	return s.do(ctx, true, func(st Store) error { return st.PutVerdict(ctx, v) })
}

// Receipt reads a verdict (retried when the owner goes away).
func (s *Shared) Receipt(ctx context.Context, verificationID string) (v Verdict, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		v, err = st.Receipt(ctx, verificationID)
		return err
	})
	return v, err
}

// Reputation reads an agent's record (retried when the owner goes away).
func (s *Shared) Reputation(ctx context.Context, agentID string, q Page) (r Reputation, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		r, err = st.Reputation(ctx, agentID, q)
		return err
	})
	return r, err
}

// Score reads an agent's score (retried when the owner goes away).
func (s *Shared) Score(ctx context.Context, agentID string, now time.Time) (sc Score, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		sc, err = st.Score(ctx, agentID, now)
		return err
	})
	return sc, err
}

// ReserveAllowance holds a free call. It is retried only when the owner
// did not run it: a hold the lost owner granted may have been written, and
// the caller sees ErrOwnerLost (a 503: the client sends the call again).
func (s *Shared) ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (a Allowance, h AllowanceHold, err error) {
	err = s.do(ctx, false, func(st Store) (err error) {
		a, h, err = st.ReserveAllowance(ctx, client, now, limit)
		return err
	})
	if err != nil || h == nil {
		return a, h, err
	}
	return a, sharedHold{h}, nil
}

// sharedHold is a free call held by an owner. When that owner goes away
// before acknowledging the hold's Commit, the call counts as the owner
// left it: written if a commit followed the reservation — the verdict's,
// normally — or the owner closed cleanly (its last commit writes every
// hold), else lost with it (a crash). Counting it again with the next
// owner would count it twice in the common cases, so Commit succeeds: the
// verdict is stored, and the call is answered.
type sharedHold struct{ h AllowanceHold }

func (h sharedHold) Commit() error {
	if err := h.h.Commit(); !errors.Is(err, ErrOwnerLost) {
		return err
	}
	return nil
}

func (h sharedHold) Release() { h.h.Release() }

// TakeAllowance uses a free call. It is retried only when the owner did
// not run it: the lost owner may have counted it.
func (s *Shared) TakeAllowance(ctx context.Context, client string, now time.Time, limit int) (a Allowance, err error) {
	err = s.do(ctx, false, func(st Store) (err error) {
		a, err = st.TakeAllowance(ctx, client, now, limit)
		return err
	})
	return a, err
}

// PeekAllowance reads an allowance (retried when the owner goes away).
func (s *Shared) PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (a Allowance, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		a, err = st.PeekAllowance(ctx, client, now, limit)
		return err
	})
	return a, err
}

// UsePayment records a payment id as used. It is not retried: the lost
// owner may have recorded it, and a second call would answer first=false,
// as for a replay.
func (s *Shared) UsePayment(ctx context.Context, paymentID string, expires time.Time, use PaymentUse) (first bool, recorded PaymentUse, err error) {
	err = s.do(ctx, false, func(st Store) (err error) {
		first, recorded, err = st.UsePayment(ctx, paymentID, expires, use)
		return err
	})
	return first, recorded, err
}

// LookupPayment reads a payment id (retried when the owner goes away).
func (s *Shared) LookupPayment(ctx context.Context, paymentID string) (use PaymentUse, found bool, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		use, found, err = st.LookupPayment(ctx, paymentID)
		return err
	})
	return use, found, err
}

// SettlePayment records a settlement. It is not retried: the caller decides
// what an unknown outcome means for the payer.
func (s *Shared) SettlePayment(ctx context.Context, paymentID string, use PaymentUse, v *Verdict) error {
	return s.do(ctx, false, func(st Store) error { return st.SettlePayment(ctx, paymentID, use, v) })
}

// ReleasePayment forgets a pending payment id. It is not retried.
func (s *Shared) ReleasePayment(ctx context.Context, paymentID string) error {
	return s.do(ctx, false, func(st Store) error { return st.ReleasePayment(ctx, paymentID) })
}

// LogTree reads the transparency log's current tree (retried when the
// owner goes away). [Shared] keeps a log whenever its file does: the
// owner's [Bolt] appends to it, and clients read it through the owner.
func (s *Shared) LogTree(ctx context.Context) (t LogTree, err error) {
	err = s.doLog(ctx, func(l Log) (err error) {
		t, err = l.LogTree(ctx)
		return err
	})
	return t, err
}

// LogInclusion reads a verdict's log entry and its inclusion proof.
func (s *Shared) LogInclusion(ctx context.Context, verificationID string) (in LogInclusion, err error) {
	err = s.doLog(ctx, func(l Log) (err error) {
		in, err = l.LogInclusion(ctx, verificationID)
		return err
	})
	return in, err
}

// LogIndex reads a verdict's log index.
func (s *Shared) LogIndex(ctx context.Context, verificationID string) (index int64, err error) {
	err = s.doLog(ctx, func(l Log) (err error) {
		index, err = l.LogIndex(ctx, verificationID)
		return err
	})
	return index, err
}

// LogTile reads one tile of the log's hashes.
func (s *Shared) LogTile(ctx context.Context, t tlog.Tile) (data []byte, err error) {
	err = s.doLog(ctx, func(l Log) (err error) {
		data, err = l.LogTile(ctx, t)
		return err
	})
	return data, err
}

// LogEntries reads one bundle of the log's entries.
func (s *Shared) LogEntries(ctx context.Context, n int64, width int) (data []byte, err error) {
	err = s.doLog(ctx, func(l Log) (err error) {
		data, err = l.LogEntries(ctx, n, width)
		return err
	})
	return data, err
}

// LogReceipts reads the stored receipts of a run of log records.
func (s *Shared) LogReceipts(ctx context.Context, first int64, count int) (receipts []json.RawMessage, err error) {
	err = s.doLog(ctx, func(l Log) (err error) {
		receipts, err = l.LogReceipts(ctx, first, count)
		return err
	})
	return receipts, err
}

// doLog runs a log read on the backend (the owner's Bolt, or the socket to
// it), retried like every read.
func (s *Shared) doLog(ctx context.Context, fn func(Log) error) error {
	return s.do(ctx, true, func(st Store) error {
		l, ok := LogOf(st)
		if !ok {
			return ErrNoLog
		}
		return fn(l)
	})
}

// AddSigningKey records a signing key (retried when the owner goes away:
// recording one twice is as once).
func (s *Shared) AddSigningKey(ctx context.Context, k KeyRecord) error {
	return s.do(ctx, true, func(st Store) error { return st.(KeyRecords).AddSigningKey(ctx, k) })
}

// SigningKeys reads the signing keys (retried when the owner goes away).
func (s *Shared) SigningKeys(ctx context.Context) (keys []KeyRecord, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		keys, err = st.(KeyRecords).SigningKeys(ctx)
		return err
	})
	return keys, err
}

// BindLog reads, or first records, the log's identity (retried when the
// owner goes away: the identity is recorded once).
func (s *Shared) BindLog(ctx context.Context, id LogIdentity) (got LogIdentity, err error) {
	err = s.do(ctx, true, func(st Store) (err error) {
		got, err = st.(KeyRecords).BindLog(ctx, id)
		return err
	})
	return got, err
}

// Check reports the owner's readiness (retried when the owner goes away).
func (s *Shared) Check(ctx context.Context) error {
	return s.do(ctx, true, func(st Store) error { return st.Check(ctx) })
}

// Close releases the store. An owner stops serving — its clients then
// reach the next owner —, removes its socket and closes the file.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.client != nil {
		return s.client.Close()
	}
	if s.owner == nil {
		return nil
	}
	if s.server != nil {
		s.server.close()
		if err := os.Remove(s.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			_ = s.owner.Close()
			return fmt.Errorf("removing the socket %s: %w", s.sock, err)
		}
	}
	return s.owner.Close()
}
