package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/mod/sumdb/tlog"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The socket protocol: net/rpc with gob over the owner's unix socket (see
// [Shared]). Every [Store] method is one call to the service "Store"; a
// store error travels in the reply as a wireError, so that the client gets
// the same sentinel back (errors.Is), and an error of the call itself is
// the connection's: ErrOwnerLost.

// rpcName is the service's name on the socket.
const rpcName = "Store"

// ErrOwnerLost: the process that owns the store file went away (exited, or
// was killed) during a call, so whether the owner applied the call is not
// known. [Shared] retries the calls for which that is safe; the others
// (allowance and payment calls) fail with this error.
var ErrOwnerLost = errors.New("the verifier process owning the store went away during the call")

// ErrNotSupported: the verifier process owning the store is an older one,
// which does not serve the call (key records, before issue #36).
var ErrNotSupported = errors.New("the verifier process owning the store is older and does not serve this call")

// errNotRun: the owner did not run the call — it was closing, or the
// call's deadline had passed when the owner came to it —, so sending it
// again, to this owner or the next, is as safe as sending it once.
var errNotRun = errors.New("the owner did not run the call")

// errServerClosed answers a call that arrived while the owner was closing:
// it was not run, and the client reaches the next owner.
var errServerClosed = fmt.Errorf("%w: it is closing (%w)", ErrOwnerLost, errNotRun)

// errExpired answers a call whose deadline had passed when the owner came
// to it (it was stopped, or busy): it was not run.
var errExpired = fmt.Errorf("%w: %w: the call's deadline had passed when the owner came to it", ErrUnavailable, errNotRun)

// replyGrace is how long past its deadline a call waits for the owner's
// answer: the owner does not run a call it comes to after the deadline, so
// one it started is answered within a commit's time, and waiting for that
// answer keeps the caller from being told a stored verdict failed.
const replyGrace = 500 * time.Millisecond

// DefaultCallTimeout bounds a call to the owner whose context has no
// deadline (see SharedOptions.CallTimeout).
const DefaultCallTimeout = 5 * time.Second

// sentinels are the errors a wireError carries by name.
var sentinels = map[string]error{
	"not_found":            ErrNotFound,
	"locked":               ErrLocked,
	"corrupt":              ErrCorrupt,
	"schema_version":       ErrSchemaVersion,
	"invalid_verdict":      ErrInvalidVerdict,
	"duplicate":            ErrDuplicate,
	"invalid_page":         ErrInvalidPage,
	"invalid_argument":     ErrInvalidArgument,
	"write_failing":        ErrWriteFailing,
	"insecure_permissions": ErrInsecurePermissions,
	"canceled":             context.Canceled,
	"deadline":             context.DeadlineExceeded,
	"hold_released":        errHoldReleased,
	"owner_lost":           ErrOwnerLost,
	"no_log":               ErrNoLog,
	"key_conflict":         ErrKeyConflict,
	"unavailable":          ErrUnavailable,
}

// wireError is a store error on the wire: its sentinels' names, its
// message, and whether the owner did not run the call (errNotRun).
type wireError struct {
	Kind    string
	Kinds   []string // further sentinels the error wraps
	Message string
	NotRun  bool
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error(), NotRun: errors.Is(err, errNotRun)}
	for kind, sentinel := range sentinels {
		if !errors.Is(err, sentinel) {
			continue
		}
		if w.Kind == "" {
			w.Kind = kind
		} else {
			w.Kinds = append(w.Kinds, kind)
		}
	}
	return w
}

// remoteError is an error the owner returned: its message, wrapping its
// sentinels.
type remoteError struct {
	msg       string
	sentinels []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.sentinels }

func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	e := &remoteError{msg: w.Message}
	for _, kind := range append([]string{w.Kind}, w.Kinds...) {
		if sentinel, ok := sentinels[kind]; ok {
			e.sentinels = append(e.sentinels, sentinel)
		}
	}
	if w.NotRun {
		e.sentinels = append(e.sentinels, errNotRun)
	}
	return e
}

// RPCArgs are the arguments of any call of the socket protocol, and
// RPCReply its answer: each call uses the fields it needs (gob sends only
// those). They are exported because net/rpc requires it; nothing else uses
// them.
type RPCArgs struct {
	ID      string // verification or payment id
	AgentID string
	Page    Page
	Now     time.Time
	Client  string
	Limit   int
	Hold    uint64 // an allowance hold's id
	Expires time.Time
	Use     PaymentUse
	Verdict *Verdict
	Tile    tlog.Tile   // LogTile
	N       int64       // LogEntries: the bundle's index; LogReceipts: the first record
	Width   int         // LogEntries: its width; LogReceipts: the count
	Key     KeyRecord   // AddSigningKey
	Log     LogIdentity // BindLog
	// Deadline is the call's: the owner does not run a call it comes to
	// after it (errExpired), and runs the call under it.
	Deadline time.Time
}

// RPCReply is the answer to a call (see RPCArgs). Err is the store's error.
type RPCReply struct {
	Err        *wireError
	Verdict    Verdict
	Reputation Reputation
	Score      Score
	Allowance  Allowance
	Hold       uint64 // ReserveAllowance: the hold's id, 0 for none
	First      bool
	Found      bool
	Use        PaymentUse
	Tree       LogTree
	Inclusion  LogInclusion
	Index      int64             // LogIndex
	Data       []byte            // LogTile, LogEntries
	Receipts   []json.RawMessage // LogReceipts
	Keys       []KeyRecord       // SigningKeys
	Log        LogIdentity       // BindLog
}

// rpcService serves a Store to one connection. Its exported methods are
// the calls (net/rpc's form); holds keeps the allowance holds the client
// reserved until it commits or releases them. A hold left when the client
// goes away is written as used with the next commit, as a hold left alone
// always is (AllowanceHold).
type rpcService struct {
	st       Store
	gate     *callGate
	mu       sync.Mutex
	holds    map[uint64]AllowanceHold
	nextHold atomic.Uint64
}

// callGate lets calls run until the server closes: closing waits for the
// calls running, and refuses later ones, so that the owner closes its file
// only once every call it accepted has finished.
type callGate struct {
	mu     sync.RWMutex
	closed bool
}

// call runs one call through the gate, under the call's deadline: a call
// the owner comes to after its deadline is not run.
func (s *rpcService) call(a *RPCArgs, fn func(ctx context.Context) error) *wireError {
	s.gate.mu.RLock()
	defer s.gate.mu.RUnlock()
	if s.gate.closed {
		return toWire(errServerClosed)
	}
	ctx := context.Background()
	if !a.Deadline.IsZero() {
		if !time.Now().Before(a.Deadline) {
			return toWire(errExpired)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, a.Deadline)
		defer cancel()
	}
	return toWire(fn(ctx))
}

func (s *rpcService) PutVerdict(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		if a.Verdict == nil {
			return fmt.Errorf("%w: no verdict", ErrInvalidVerdict)
		}
		return s.st.PutVerdict(ctx, *a.Verdict)
	})
	return nil
}

func (s *rpcService) Receipt(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.Verdict, err = s.st.Receipt(ctx, a.ID)
		return err
	})
	return nil
}

func (s *rpcService) Reputation(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.Reputation, err = s.st.Reputation(ctx, a.AgentID, a.Page)
		return err
	})
	return nil
}

func (s *rpcService) Score(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.Score, err = s.st.Score(ctx, a.AgentID, a.Now)
		return err
	})
	return nil
}

func (s *rpcService) ReserveAllowance(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		al, hold, err := s.st.ReserveAllowance(ctx, a.Client, a.Now, a.Limit)
		r.Allowance = al
		if err == nil && hold != nil {
			r.Hold = s.nextHold.Add(1)
			s.mu.Lock()
			s.holds[r.Hold] = hold
			s.mu.Unlock()
		}
		return err
	})
	return nil
}

// takeHold removes and returns a hold reserved by a client.
func (s *rpcService) takeHold(id uint64) (AllowanceHold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[id]
	if !ok {
		return nil, fmt.Errorf("%w: no free call is held under %d", ErrInvalidArgument, id)
	}
	delete(s.holds, id)
	return h, nil
}

func (s *rpcService) CommitHold(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(context.Context) error {
		h, err := s.takeHold(a.Hold)
		if err != nil {
			return err
		}
		return h.Commit()
	})
	return nil
}

func (s *rpcService) ReleaseHold(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(context.Context) error {
		h, err := s.takeHold(a.Hold)
		if err != nil {
			return err
		}
		h.Release()
		return nil
	})
	return nil
}

func (s *rpcService) TakeAllowance(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.Allowance, err = s.st.TakeAllowance(ctx, a.Client, a.Now, a.Limit)
		return err
	})
	return nil
}

func (s *rpcService) PeekAllowance(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.Allowance, err = s.st.PeekAllowance(ctx, a.Client, a.Now, a.Limit)
		return err
	})
	return nil
}

func (s *rpcService) UsePayment(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.First, r.Use, err = s.st.UsePayment(ctx, a.ID, a.Expires, a.Use)
		return err
	})
	return nil
}

func (s *rpcService) LookupPayment(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) (err error) {
		r.Use, r.Found, err = s.st.LookupPayment(ctx, a.ID)
		return err
	})
	return nil
}

func (s *rpcService) SettlePayment(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error { return s.st.SettlePayment(ctx, a.ID, a.Use, a.Verdict) })
	return nil
}

func (s *rpcService) ReleasePayment(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error { return s.st.ReleasePayment(ctx, a.ID) })
	return nil
}

func (s *rpcService) Check(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error { return s.st.Check(ctx) })
	return nil
}

// rpcServer serves a Store on a listener until closed.
// logOf is the served store's log, ErrNoLog when it keeps none.
func (s *rpcService) logOf() (Log, error) {
	l, ok := LogOf(s.st)
	if !ok {
		return nil, ErrNoLog
	}
	return l, nil
}

func (s *rpcService) LogTree(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		l, err := s.logOf()
		if err == nil {
			r.Tree, err = l.LogTree(ctx)
		}
		return err
	})
	return nil
}

func (s *rpcService) LogInclusion(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		l, err := s.logOf()
		if err == nil {
			r.Inclusion, err = l.LogInclusion(ctx, a.ID)
		}
		return err
	})
	return nil
}

func (s *rpcService) LogIndex(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		l, err := s.logOf()
		if err == nil {
			r.Index, err = l.LogIndex(ctx, a.ID)
		}
		return err
	})
	return nil
}

func (s *rpcService) LogTile(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		l, err := s.logOf()
		if err == nil {
			r.Data, err = l.LogTile(ctx, a.Tile)
		}
		return err
	})
	return nil
}

func (s *rpcService) LogEntries(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		l, err := s.logOf()
		if err == nil {
			r.Data, err = l.LogEntries(ctx, a.N, a.Width)
		}
		return err
	})
	return nil
}

func (s *rpcService) LogReceipts(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		l, err := s.logOf()
		if err == nil {
			r.Receipts, err = l.LogReceipts(ctx, a.N, a.Width)
		}
		return err
	})
	return nil
}

// keysOf is the served store's key records.
func (s *rpcService) keysOf() (KeyRecords, error) {
	k, ok := KeyRecordsOf(s.st)
	if !ok {
		return nil, errors.New("the store keeps no key records")
	}
	return k, nil
}

func (s *rpcService) AddSigningKey(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		k, err := s.keysOf()
		if err == nil {
			err = k.AddSigningKey(ctx, a.Key)
		}
		return err
	})
	return nil
}

func (s *rpcService) SigningKeys(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		k, err := s.keysOf()
		if err == nil {
			r.Keys, err = k.SigningKeys(ctx)
		}
		return err
	})
	return nil
}

func (s *rpcService) BindLog(a *RPCArgs, r *RPCReply) error {
	r.Err = s.call(a, func(ctx context.Context) error {
		k, err := s.keysOf()
		if err == nil {
			r.Log, err = k.BindLog(ctx, a.Log)
		}
		return err
	})
	return nil
}

type rpcServer struct {
	ln     net.Listener
	st     Store
	gate   callGate
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	done   chan struct{}
}

// serveStore serves st on ln in its own goroutine.
func serveStore(ln net.Listener, st Store) (*rpcServer, error) {
	s := &rpcServer{ln: ln, st: st, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	if _, err := s.newConnServer(); err != nil {
		return nil, err
	}
	go s.accept()
	return s, nil
}

// newConnServer is the RPC server of one connection, with its own holds.
func (s *rpcServer) newConnServer() (*rpc.Server, error) {
	srv := rpc.NewServer()
	svc := &rpcService{st: s.st, gate: &s.gate, holds: map[uint64]AllowanceHold{}}
	if err := srv.RegisterName(rpcName, svc); err != nil {
		return nil, fmt.Errorf("registering the store service: %w", err)
	}
	return srv, nil
}

func (s *rpcServer) accept() {
	defer close(s.done)
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		go func() {
			if srv, err := s.newConnServer(); err == nil { // it registered in serveStore
				srv.ServeConn(conn)
			}
			conn.Close()
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
		}()
	}
}

// dropConns closes every connection and refuses new ones: answers not yet
// written are lost.
func (s *rpcServer) dropConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
}

// closeDrain is how long a closing owner keeps its connections after the
// last call it ran returned, for the answers to reach the clients.
const closeDrain = 100 * time.Millisecond

// close stops accepting, refuses the calls that come next (errServerClosed:
// not run, so their clients send them to the next owner), waits for the
// calls running to finish and their answers to be written, then drops
// every connection.
func (s *rpcServer) close() {
	s.ln.Close()
	<-s.done
	s.gate.mu.Lock()
	s.gate.closed = true
	s.gate.mu.Unlock()
	time.Sleep(closeDrain)
	s.dropConns()
}

// rpcClient is a Store served by another process on its socket. A call
// that loses the connection fails with ErrOwnerLost; one the owner did not
// run (it was closing, the connection was already gone, or its deadline
// had passed) also wraps errNotRun.
type rpcClient struct {
	c           *rpc.Client
	callTimeout time.Duration // the deadline of a call whose context has none
}

var _ Store = (*rpcClient)(nil)

// dialStore connects to the store served on the unix socket at path.
func dialStore(path string, timeout, callTimeout time.Duration) (*rpcClient, error) {
	conn, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, err
	}
	return &rpcClient{c: rpc.NewClient(conn), callTimeout: cmp.Or(callTimeout, DefaultCallTimeout)}, nil
}

// do runs one call under ctx's deadline (callTimeout when it has none),
// which the owner is told: it does not run a call it comes to after it.
// Past the deadline, do waits replyGrace more for the answer of a call the
// owner may have started, then fails with ErrUnavailable (and
// context.DeadlineExceeded). A ctx cancelled before it ends the wait at once.
func (c *rpcClient) do(ctx context.Context, method string, args *RPCArgs, reply any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.callTimeout)
	}
	args.Deadline = deadline
	call := c.c.Go(rpcName+"."+method, args, reply, make(chan *rpc.Call, 1))
	wait := time.NewTimer(time.Until(deadline) + replyGrace)
	defer wait.Stop()
	select {
	case <-call.Done:
	case <-wait.C:
		return fmt.Errorf("store call %s: %w: no answer from the owner within the deadline (%w)", method, ErrUnavailable, context.DeadlineExceeded)
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		select { // the deadline: the owner answers what it started
		case <-call.Done:
		case <-wait.C:
			return fmt.Errorf("store call %s: %w: no answer from the owner within the deadline (%w)", method, ErrUnavailable, context.DeadlineExceeded)
		}
	}
	var server rpc.ServerError
	switch {
	case call.Error == nil:
		return nil
	case errors.As(call.Error, &server) && strings.Contains(string(server), "can't find method"):
		// An owner older than this process: it serves no such call.
		return fmt.Errorf("store call %s: %w", method, ErrNotSupported)
	case errors.As(call.Error, &server): // the owner could not decode the call
		return fmt.Errorf("store call %s: %w", method, call.Error)
	case errors.Is(call.Error, rpc.ErrShutdown): // the connection was gone before the call was sent
		return fmt.Errorf("store call %s: %w (%w): %v", method, ErrOwnerLost, errNotRun, call.Error)
	}
	// io.ErrUnexpectedEOF, a reset: the connection went during the call.
	return fmt.Errorf("store call %s: %w: %v", method, ErrOwnerLost, call.Error)
}

func (c *rpcClient) PutVerdict(ctx context.Context, v Verdict) error {
	var r RPCReply
	if err := c.do(ctx, "PutVerdict", &RPCArgs{Verdict: &v}, &r); err != nil {
		return err
	}
	return r.Err.err()
}

func (c *rpcClient) Receipt(ctx context.Context, id string) (Verdict, error) {
	var r RPCReply
	if err := c.do(ctx, "Receipt", &RPCArgs{ID: id}, &r); err != nil {
		return Verdict{}, err
	}
	return r.Verdict, r.Err.err()
}

func (c *rpcClient) Reputation(ctx context.Context, agentID string, q Page) (Reputation, error) {
	var r RPCReply
	if err := c.do(ctx, "Reputation", &RPCArgs{AgentID: agentID, Page: q}, &r); err != nil {
		return Reputation{}, err
	}
	if r.Reputation.Recent == nil { // gob sends an empty list as none
		r.Reputation.Recent = []VerdictSummary{}
	}
	return r.Reputation, r.Err.err()
}

func (c *rpcClient) Score(ctx context.Context, agentID string, now time.Time) (Score, error) {
	var r RPCReply
	if err := c.do(ctx, "Score", &RPCArgs{AgentID: agentID, Now: now}, &r); err != nil {
		return Score{}, err
	}
	if r.Score.Recent == nil { // gob sends an empty list as none
		r.Score.Recent = []VerdictSummary{}
	}
	return r.Score, r.Err.err()
}

func (c *rpcClient) ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, AllowanceHold, error) {
	var r RPCReply
	if err := c.do(ctx, "ReserveAllowance", &RPCArgs{Client: client, Now: now, Limit: limit}, &r); err != nil {
		return Allowance{}, nil, err
	}
	if err := r.Err.err(); err != nil {
		return r.Allowance, nil, err
	}
	if r.Hold == 0 {
		return r.Allowance, nil, nil
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.callTimeout)
	}
	return r.Allowance, &rpcHold{c: c, id: r.Hold, deadline: deadline}, nil
}

func (c *rpcClient) TakeAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	var r RPCReply
	if err := c.do(ctx, "TakeAllowance", &RPCArgs{Client: client, Now: now, Limit: limit}, &r); err != nil {
		return Allowance{}, err
	}
	return r.Allowance, r.Err.err()
}

func (c *rpcClient) PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	var r RPCReply
	if err := c.do(ctx, "PeekAllowance", &RPCArgs{Client: client, Now: now, Limit: limit}, &r); err != nil {
		return Allowance{}, err
	}
	return r.Allowance, r.Err.err()
}

func (c *rpcClient) UsePayment(ctx context.Context, paymentID string, expires time.Time, use PaymentUse) (bool, PaymentUse, error) {
	var r RPCReply
	if err := c.do(ctx, "UsePayment", &RPCArgs{ID: paymentID, Expires: expires, Use: use}, &r); err != nil {
		return false, PaymentUse{}, err
	}
	return r.First, r.Use, r.Err.err()
}

func (c *rpcClient) LookupPayment(ctx context.Context, paymentID string) (PaymentUse, bool, error) {
	var r RPCReply
	if err := c.do(ctx, "LookupPayment", &RPCArgs{ID: paymentID}, &r); err != nil {
		return PaymentUse{}, false, err
	}
	return r.Use, r.Found, r.Err.err()
}

func (c *rpcClient) SettlePayment(ctx context.Context, paymentID string, use PaymentUse, v *Verdict) error {
	var r RPCReply
	if err := c.do(ctx, "SettlePayment", &RPCArgs{ID: paymentID, Use: use, Verdict: v}, &r); err != nil {
		return err
	}
	return r.Err.err()
}

func (c *rpcClient) ReleasePayment(ctx context.Context, paymentID string) error {
	var r RPCReply
	if err := c.do(ctx, "ReleasePayment", &RPCArgs{ID: paymentID}, &r); err != nil {
		return err
	}
	return r.Err.err()
}

func (c *rpcClient) Check(ctx context.Context) error {
	var r RPCReply
	if err := c.do(ctx, "Check", &RPCArgs{}, &r); err != nil {
		return err
	}
	return r.Err.err()
}

// Close closes the connection; the owner keeps serving.
func (c *rpcClient) LogTree(ctx context.Context) (LogTree, error) {
	var r RPCReply
	if err := c.do(ctx, "LogTree", &RPCArgs{}, &r); err != nil {
		return LogTree{}, err
	}
	return r.Tree, r.Err.err()
}

func (c *rpcClient) LogInclusion(ctx context.Context, verificationID string) (LogInclusion, error) {
	var r RPCReply
	if err := c.do(ctx, "LogInclusion", &RPCArgs{ID: verificationID}, &r); err != nil {
		return LogInclusion{}, err
	}
	return r.Inclusion, r.Err.err()
}

func (c *rpcClient) LogIndex(ctx context.Context, verificationID string) (int64, error) {
	var r RPCReply
	if err := c.do(ctx, "LogIndex", &RPCArgs{ID: verificationID}, &r); err != nil {
		return 0, err
	}
	return r.Index, r.Err.err()
}

func (c *rpcClient) LogTile(ctx context.Context, t tlog.Tile) ([]byte, error) {
	var r RPCReply
	if err := c.do(ctx, "LogTile", &RPCArgs{Tile: t}, &r); err != nil {
		return nil, err
	}
	return r.Data, r.Err.err()
}

func (c *rpcClient) LogEntries(ctx context.Context, n int64, width int) ([]byte, error) {
	var r RPCReply
	if err := c.do(ctx, "LogEntries", &RPCArgs{N: n, Width: width}, &r); err != nil {
		return nil, err
	}
	return r.Data, r.Err.err()
}

func (c *rpcClient) LogReceipts(ctx context.Context, first int64, count int) ([]json.RawMessage, error) {
	var r RPCReply
	if err := c.do(ctx, "LogReceipts", &RPCArgs{N: first, Width: count}, &r); err != nil {
		return nil, err
	}
	return r.Receipts, r.Err.err()
}

func (c *rpcClient) AddSigningKey(ctx context.Context, k KeyRecord) error {
	var r RPCReply
	if err := c.do(ctx, "AddSigningKey", &RPCArgs{Key: k}, &r); err != nil {
		return err
	}
	return r.Err.err()
}

func (c *rpcClient) SigningKeys(ctx context.Context) ([]KeyRecord, error) {
	var r RPCReply
	if err := c.do(ctx, "SigningKeys", &RPCArgs{}, &r); err != nil {
		return nil, err
	}
	return r.Keys, r.Err.err()
}

func (c *rpcClient) BindLog(ctx context.Context, id LogIdentity) (LogIdentity, error) {
	var r RPCReply
	if err := c.do(ctx, "BindLog", &RPCArgs{Log: id}, &r); err != nil {
		return LogIdentity{}, err
	}
	return r.Log, r.Err.err()
}

func (c *rpcClient) Close() error { return c.c.Close() }

// rpcHold is a free call held by the owner for this client. Its Commit and
// Release are bounded by the reservation's deadline (its callTimeout when
// it had none), or replyGrace when that has passed: a hold the owner never hears of again is written as
// used with its next commit, as a hold left alone always is.
type rpcHold struct {
	c        *rpcClient
	id       uint64
	deadline time.Time
	mu       sync.Mutex
	done     bool // committed or released
	released bool
}

// bound is the context of the hold's next call.
func (h *rpcHold) bound() (context.Context, context.CancelFunc) {
	d := h.deadline
	if least := time.Now().Add(replyGrace); d.Before(least) {
		d = least
	}
	return context.WithDeadline(context.Background(), d)
}

func (h *rpcHold) Commit() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return fmt.Errorf("committing free call: %w", errHoldReleased)
	}
	if h.done {
		return nil
	}
	h.done = true
	ctx, cancel := h.bound()
	defer cancel()
	var r RPCReply
	if err := h.c.do(ctx, "CommitHold", &RPCArgs{Hold: h.id}, &r); err != nil {
		return err
	}
	return r.Err.err()
}

func (h *rpcHold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return // a no-op after Commit
	}
	h.done, h.released = true, true
	ctx, cancel := h.bound()
	defer cancel()
	var r RPCReply
	_ = h.c.do(ctx, "ReleaseHold", &RPCArgs{Hold: h.id}, &r) // the owner writes it as used if this is lost
}
