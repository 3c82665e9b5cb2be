package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"golang.org/x/mod/sumdb/tlog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openShared opens a Shared store on path, closed when the test ends.
func openShared(t *testing.T, path string) *Shared {
	t.Helper()
	s, err := OpenShared(path, &SharedOptions{Bolt: Options{Now: func() time.Time { return t0 }}, Wait: 2 * time.Second})
	if err != nil {
		t.Fatalf("OpenShared: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// ownerAndClient opens the owner of a new store, then a client of it (the
// second open in this process finds the file locked, as another process
// would).
func ownerAndClient(t *testing.T) (owner, client *Shared, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "verifier.db")
	owner = openShared(t, path)
	client = openShared(t, path)
	if isOwner, err := owner.Owner(); !isOwner || err != nil {
		t.Fatalf("first open: owner %v (%v), want the owner serving its socket", isOwner, err)
	}
	if isOwner, _ := client.Owner(); isOwner {
		t.Fatal("second open owns the file too")
	}
	return owner, client, path
}

// TestSharedRoundTrip: every Store method called through the socket gives
// what the owner's file gives.
func TestSharedRoundTrip(t *testing.T) {
	owner, client, _ := ownerAndClient(t)
	ctx := context.Background()
	vs := []Verdict{
		testVerdict("a", "agent-1", true, t0),
		testVerdict("b", "agent-1", false, t0.Add(time.Second)),
		testVerdict("c", "test-agent", true, t0.Add(2*time.Second)),
	}
	put(t, client, vs...)
	for _, v := range vs {
		got, err := owner.Receipt(ctx, v.VerificationID)
		if err != nil || !cmp.Equal(got, v) {
			t.Errorf("owner Receipt(%s) = %+v, %v; want what the client stored", v.VerificationID, got, err)
		}
		viaClient, err := client.Receipt(ctx, v.VerificationID)
		if err != nil || !cmp.Equal(viaClient, got) {
			t.Errorf("client Receipt(%s) = %+v, %v; want %+v", v.VerificationID, viaClient, err, got)
		}
	}
	for _, agent := range []string{"agent-1", "test-agent", "never-seen"} {
		for _, page := range []Page{{}, {Limit: 1}} {
			want, werr := owner.Reputation(ctx, agent, page)
			got, gerr := client.Reputation(ctx, agent, page)
			if werr != nil || gerr != nil || !cmp.Equal(got, want) {
				t.Errorf("Reputation(%s, %+v): client %+v, %v; owner %+v, %v", agent, page, got, gerr, want, werr)
			}
		}
		want, werr := owner.Score(ctx, agent, t0.Add(time.Hour))
		got, gerr := client.Score(ctx, agent, t0.Add(time.Hour))
		if werr != nil || gerr != nil || !cmp.Equal(got, want) {
			t.Errorf("Score(%s): client %+v, %v; owner %+v, %v", agent, got, gerr, want, werr)
		}
	}

	// Allowance: a hold reserved through the socket counts, its commit is
	// durable, a released one is given back.
	a, hold, err := client.ReserveAllowance(ctx, "client-1", t0, 2)
	if err != nil || !a.Granted || a.Remaining != 1 || hold == nil {
		t.Fatalf("ReserveAllowance = %+v, %v, %v", a, hold, err)
	}
	if err := hold.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	_, hold2, err := client.ReserveAllowance(ctx, "client-1", t0, 2)
	if err != nil || hold2 == nil {
		t.Fatalf("second ReserveAllowance: %v, %v", hold2, err)
	}
	hold2.Release()
	if peek, err := owner.PeekAllowance(ctx, "client-1", t0, 2); err != nil || peek.Remaining != 1 {
		t.Errorf("owner PeekAllowance after a commit and a release = %+v, %v; want 1 remaining", peek, err)
	}
	if took, err := client.TakeAllowance(ctx, "client-1", t0, 2); err != nil || !took.Granted || took.Remaining != 0 {
		t.Errorf("TakeAllowance = %+v, %v", took, err)
	}
	if peek, err := client.PeekAllowance(ctx, "client-1", t0, 2); err != nil || peek.Granted || peek.Remaining != 0 {
		t.Errorf("client PeekAllowance when used up = %+v, %v", peek, err)
	}

	// Payments.
	exp := t0.Add(5 * time.Minute)
	pending := PaymentUse{State: PaymentPending, RequestKey: "req-1", Since: t0}
	if first, got, err := client.UsePayment(ctx, "0xabc", exp, pending); err != nil || !first || !cmp.Equal(got, pending) {
		t.Fatalf("UsePayment = %v, %+v, %v", first, got, err)
	}
	if first, _, err := client.UsePayment(ctx, "0xabc", exp, pending); err != nil || first {
		t.Errorf("UsePayment again = first %v, %v; want a replay", first, err)
	}
	paid := testVerdict("paid", "agent-2", true, t0.Add(3*time.Second))
	kept := PaymentUse{State: PaymentSettled, RequestKey: "req-1", Since: t0.Add(time.Second),
		Settlement: []byte(`{"success":true}`), Text: "the text", Answer: []byte(`{"a":"<&>"}`)}
	if err := client.SettlePayment(ctx, "0xabc", kept, &paid); err != nil {
		t.Fatal(err)
	}
	if got, found, err := owner.LookupPayment(ctx, "0xabc"); err != nil || !found || !cmp.Equal(got, kept) {
		t.Errorf("owner LookupPayment = %+v, %v, %v; want %+v", got, found, err, kept)
	}
	if got, err := owner.Receipt(ctx, "paid"); err != nil || !cmp.Equal(got, paid) {
		t.Errorf("the settled payment's verdict = %+v, %v", got, err)
	}
	if _, _, err := client.UsePayment(ctx, "0xdef", exp, pending); err != nil {
		t.Fatal(err)
	}
	if err := client.ReleasePayment(ctx, "0xdef"); err != nil {
		t.Fatal(err)
	}
	if _, found, err := client.LookupPayment(ctx, "0xdef"); err != nil || found {
		t.Errorf("LookupPayment after ReleasePayment = found %v, %v", found, err)
	}
	if err := client.Check(ctx); err != nil {
		t.Errorf("Check = %v", err)
	}
}

// TestSharedErrorsMapBack: the owner's errors reach the client as the same
// sentinels, with their messages.
func TestSharedErrorsMapBack(t *testing.T) {
	_, client, _ := ownerAndClient(t)
	ctx := context.Background()
	put(t, client, testVerdict("a", "agent-1", true, t0))
	changed := testVerdict("a", "agent-1", false, t0)
	invalid := testVerdict("b", "agent-1", true, t0)
	invalid.Result = "maybe"
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"receipt not found", second(client.Receipt(ctx, "nope")), ErrNotFound},
		{"duplicate", client.PutVerdict(ctx, changed), ErrDuplicate},
		{"invalid verdict", client.PutVerdict(ctx, invalid), ErrInvalidVerdict},
		{"invalid page", second(client.Reputation(ctx, "agent-1", Page{Cursor: "not a cursor"})), ErrInvalidPage},
		{"invalid argument", second(client.PeekAllowance(ctx, "", t0, 2)), ErrInvalidArgument},
		{"canceled", client.PutVerdict(canceled(), testVerdict("c", "agent-1", true, t0)), context.Canceled},
	} {
		if !errors.Is(tt.err, tt.want) || tt.err.Error() == tt.want.Error() && tt.want != context.Canceled {
			t.Errorf("%s: error %v, want %v with its details", tt.name, tt.err, tt.want)
		}
	}
	// The same verdict again is a no-op: what makes a retried write safe.
	if err := client.PutVerdict(ctx, testVerdict("a", "agent-1", true, t0)); err != nil {
		t.Errorf("PutVerdict of a stored verdict again = %v, want nil", err)
	}
	if rep, err := client.Reputation(ctx, "agent-1", Page{}); err != nil || rep.Total != 1 {
		t.Errorf("Reputation after a repeated write = %+v, %v; want 1 verdict", rep, err)
	}
}

func second[T any](_ T, err error) error { return err }

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestSharedSocketMode: the socket is 0600, a socket, beside the file, and
// gone once the owner closes.
func TestSharedSocketMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	owner := openShared(t, path)
	sock := filepath.Join(filepath.Dir(path), SocketName)
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", fi.Mode())
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close, stat socket = %v, want it removed", err)
	}
}

// TestSharedStaleSocket: a socket file left by an owner that was killed
// (nobody listens on it) is replaced by the next owner, whose clients reach
// it.
func TestSharedStaleSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := net.Dial("unix", sock); err == nil {
		t.Fatal("the stale socket answers")
	}
	path := filepath.Join(dir, "verifier.db")
	owner := openShared(t, path)
	client := openShared(t, path)
	if isOwner, serveErr := owner.Owner(); !isOwner || serveErr != nil {
		t.Fatalf("owner = %v, %v", isOwner, serveErr)
	}
	put(t, client, testVerdict("a", "agent-1", true, t0))
	if _, err := owner.Receipt(context.Background(), "a"); err != nil {
		t.Errorf("owner Receipt of the client's verdict: %v", err)
	}
}

// TestSharedFailover: when the owner closes, its clients go on: one takes
// the file, the other reaches it, and every verdict written before and
// after is there for both.
func TestSharedFailover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	owner := openShared(t, path)
	b, c := openShared(t, path), openShared(t, path)
	put(t, b, testVerdict("before", "agent-1", true, t0))
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for j, s := range []*Shared{b, c} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := testVerdict(fmt.Sprintf("after-%d-%d", j, i), "agent-1", i%2 == 0, t0.Add(time.Duration(i+1)*time.Second))
				errs <- s.PutVerdict(context.Background(), v)
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("PutVerdict after the owner closed: %v", err)
		}
	}
	bOwns, _ := b.Owner()
	cOwns, _ := c.Owner()
	if bOwns == cOwns {
		t.Errorf("after failover b owns %v, c owns %v: want exactly one owner", bOwns, cOwns)
	}
	for name, s := range map[string]*Shared{"b": b, "c": c} {
		rep, err := s.Reputation(context.Background(), "agent-1", Page{})
		if err != nil || rep.Total != 41 {
			t.Errorf("%s: Reputation total = %d, %v; want 41", name, rep.Total, err)
		}
	}
}

// TestSharedLockedWithoutOwner: a lock held by a process that serves no
// socket (another program, an older verifier) is ErrLocked after the wait,
// naming the socket.
func TestSharedLockedWithoutOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	held, err := OpenBolt(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = OpenShared(path, &SharedOptions{Wait: 300 * time.Millisecond})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), SocketName) {
		t.Errorf("OpenShared on a foreign lock = %v, want ErrLocked naming the socket", err)
	}
}

// answerLost is an owner's Store whose PutVerdict commits, then drops every
// connection before answering and goes away: the client never hears that
// its verdict was stored.
type answerLost struct {
	*Bolt
	srv  *rpcServer
	gone chan struct{}
}

func (a *answerLost) PutVerdict(ctx context.Context, v Verdict) error {
	err := a.Bolt.PutVerdict(ctx, v)
	a.srv.dropConns()
	go func() {
		a.srv.close()
		a.Bolt.Close()
		close(a.gone)
	}()
	return err
}

// TestSharedRetryAfterLostAnswer: a verdict the owner committed but could
// not acknowledge before going away is written again against the next
// owner, and counted once.
func TestSharedRetryAfterLostAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	b, err := OpenBolt(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenSocket(filepath.Join(filepath.Dir(path), SocketName))
	if err != nil {
		t.Fatal(err)
	}
	owner := &answerLost{Bolt: b, gone: make(chan struct{})}
	if owner.srv, err = serveStore(ln, owner); err != nil {
		t.Fatal(err)
	}
	client := openShared(t, path)
	v := testVerdict("a", "agent-1", true, t0)
	if err := client.PutVerdict(context.Background(), v); err != nil {
		t.Fatalf("PutVerdict whose answer was lost = %v, want it retried and acknowledged", err)
	}
	<-owner.gone
	if isOwner, _ := client.Owner(); !isOwner {
		t.Error("the client did not take the store over")
	}
	rep, err := client.Reputation(context.Background(), "agent-1", Page{})
	if err != nil || rep.Total != 1 {
		t.Errorf("Reputation = %d verdicts, %v; want the verdict counted once", rep.Total, err)
	}
}

// TestSharedLog: a client reads the transparency log through the owner —
// the same tree, inclusion proofs that check against it, the same tiles and
// entry bundles — for verdicts stored through either process.
func TestSharedLog(t *testing.T) {
	owner, client, _ := ownerAndClient(t)
	ctx := context.Background()
	put(t, client, testVerdict("a", "agent-1", true, t0), testVerdict("b", "agent-1", false, t0.Add(time.Second)))
	put(t, owner, testVerdict("c", "agent-2", true, t0.Add(2*time.Second)))

	want, err := owner.LogTree(ctx)
	if err != nil || want.Size != 3 {
		t.Fatalf("owner LogTree = %+v, %v; want 3 entries", want, err)
	}
	got, err := client.LogTree(ctx)
	if err != nil || got != want {
		t.Fatalf("client LogTree = %+v, %v; want the owner's %+v", got, err, want)
	}
	for _, id := range []string{"a", "b", "c"} {
		in, err := client.LogInclusion(ctx, id)
		if err != nil {
			t.Fatalf("client LogInclusion(%s): %v", id, err)
		}
		if err := tlog.CheckRecord(in.Proof, in.Tree.Size, in.Tree.Hash, in.Index, tlog.RecordHash(in.Entry[:])); err != nil {
			t.Errorf("inclusion proof of %s read through the socket: %v", id, err)
		}
		for _, s := range []*Shared{owner, client} {
			if index, err := s.LogIndex(ctx, id); err != nil || index != in.Index {
				t.Errorf("LogIndex(%s) = %d, %v; want the inclusion's index %d", id, index, err, in.Index)
			}
		}
	}
	if _, err := client.LogInclusion(ctx, "never-stored"); !errors.Is(err, ErrNotFound) {
		t.Errorf("client LogInclusion of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := client.LogIndex(ctx, "never-stored"); !errors.Is(err, ErrNotFound) {
		t.Errorf("client LogIndex of an unknown id: %v, want ErrNotFound", err)
	}
	tile := tlog.Tile{H: TileHeight, L: 0, N: 0, W: 3}
	wantTile, err := owner.LogTile(ctx, tile)
	if err != nil {
		t.Fatal(err)
	}
	if gotTile, err := client.LogTile(ctx, tile); err != nil || !bytes.Equal(gotTile, wantTile) {
		t.Errorf("client LogTile = %x, %v; want the owner's %x", gotTile, err, wantTile)
	}
	wantEntries, err := owner.LogEntries(ctx, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if gotEntries, err := client.LogEntries(ctx, 0, 3); err != nil || !bytes.Equal(gotEntries, wantEntries) {
		t.Errorf("client LogEntries = %x, %v; want the owner's %x", gotEntries, err, wantEntries)
	}
}

// TestSharedHoldAcrossOwnerExit: a free call held by an owner that exits
// cleanly before the hold's Commit counts once: the owner wrote it as it
// closed, Commit succeeds (the verdict it paid for is answered), and the
// next owner reads it used, not twice.
func TestSharedHoldAcrossOwnerExit(t *testing.T) {
	owner, client, _ := ownerAndClient(t)
	ctx := context.Background()
	a, h, err := client.ReserveAllowance(ctx, "client-1", t0, 5)
	if err != nil || h == nil || a.Remaining != 4 {
		t.Fatalf("ReserveAllowance = %+v, %v, %v", a, h, err)
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(); err != nil {
		t.Errorf("Commit after the owner exited = %v, want nil: the owner wrote the hold as it closed", err)
	}
	if a, err := client.PeekAllowance(ctx, "client-1", t0, 5); err != nil || a.Remaining != 4 {
		t.Errorf("PeekAllowance on the next owner = %+v, %v; want 4 left (the call counted once)", a, err)
	}
}

// TestSharedCallAfterOwnerExit: the first call after the owner exited
// cleanly finds the connection gone before it is sent: it is not run, so
// even a call that is never retried mid-way (ReserveAllowance) is sent to
// the next owner and succeeds.
func TestSharedCallAfterOwnerExit(t *testing.T) {
	owner, client, _ := ownerAndClient(t)
	ctx := context.Background()
	if _, err := client.PeekAllowance(ctx, "client-1", t0, 5); err != nil {
		t.Fatal(err)
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the client's connection sees the close
	if a, h, err := client.ReserveAllowance(ctx, "client-1", t0, 5); err != nil || h == nil {
		t.Errorf("ReserveAllowance after the owner exited = %+v, %v, %v; want it granted by the next owner", a, h, err)
	}
}
