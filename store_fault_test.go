//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
)

// faultReply is what a client keeps of one answer of a store-fault test.
type faultReply struct {
	status     int
	retryAfter string
	code       string
	retryable  bool
	id         string // the verification id of a 200
	elapsed    time.Duration
	body       string
}

// call sends one request to base+path (POST with body, else GET) within
// limit and reads the answer's status, code and verification id.
func faultCall(t *testing.T, method, url, body string, limit time.Duration) (faultReply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return faultReply{elapsed: time.Since(start)}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := faultReply{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), elapsed: time.Since(start), body: string(raw)}
	if err != nil {
		return r, err
	}
	var a struct {
		Code           string `json:"code"`
		Retryable      bool   `json:"retryable"`
		VerificationID string `json:"verification_id"`
	}
	_ = json.Unmarshal(raw, &a)
	r.code, r.retryable, r.id = a.Code, a.Retryable, a.VerificationID
	return r, nil
}

// storedVerdicts opens the data dir's store file, once every process on
// it exited, and returns the verification ids of the agent's verdicts.
func storedVerdicts(t *testing.T, dir string) map[string]bool {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(dir, storeFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := map[string]bool{}
	q := store.Page{Limit: store.MaxPageLimit}
	for {
		rep, err := st.Reputation(context.Background(), multiAgent, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Recent {
			ids[v.VerificationID] = true
		}
		if rep.NextCursor == "" {
			return ids
		}
		q.Cursor = rep.NextCursor
	}
}

// TestStoppedOwnerIsUnavailable: with the process owning the bbolt store
// stopped (SIGSTOP, as Ctrl-Z does to a stdio server), another process's
// verification, reputation and log reads answer 503 unavailable with
// Retry-After within the request's deadline, not when the owner resumes;
// once it does, calls are served again and nothing was stored for the
// calls refused.
func TestStoppedOwnerIsUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildVerifier(t)
	dir := t.TempDir()
	owner := startProc(t, bin, "--data-dir", dir)
	other := startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir, "--verify-timeout", "2s")
	if strings.Contains(other.stderr.String(), "this process owns it") {
		t.Fatalf("the HTTP process owns the store, want the stdio one to:\n%s", other.stderr)
	}
	first, err := faultCall(t, http.MethodPost, other.base+"/verify/schema", verifyArgs(t, "before-stop"), 30*time.Second)
	if err != nil || first.status != http.StatusOK {
		t.Fatalf("verification before the stop: %+v, %v", first, err)
	}
	if err := owner.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = owner.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	// The deadline is 2 s, the owner's answer is waited for half a second
	// past it; the rest is a loaded machine's slack.
	const within = 8 * time.Second
	for _, tt := range []struct{ name, method, path, body string }{
		{"verify", http.MethodPost, "/verify/schema", verifyArgs(t, "while-stopped")},
		{"reputation", http.MethodGet, "/reputation/" + multiAgent, ""},
		{"score", http.MethodGet, "/score/" + multiAgent, ""},
		{"log checkpoint", http.MethodGet, "/log/checkpoint", ""},
		{"receipt", http.MethodGet, "/receipts/" + first.id, ""},
	} {
		r, err := faultCall(t, tt.method, other.base+tt.path, tt.body, 20*time.Second)
		switch {
		case err != nil:
			t.Errorf("%s with the owner stopped: no answer after %s: %v", tt.name, r.elapsed.Round(time.Millisecond), err)
		case r.status != http.StatusServiceUnavailable || r.code != "unavailable" || !r.retryable || r.retryAfter == "":
			t.Errorf("%s with the owner stopped = %d %s retryable %v Retry-After %q, want 503 unavailable, retryable, with Retry-After: %s",
				tt.name, r.status, r.code, r.retryable, r.retryAfter, r.body)
		case r.elapsed > within:
			t.Errorf("%s with the owner stopped answered after %s, want within %s", tt.name, r.elapsed.Round(time.Millisecond), within)
		}
	}
	if err := owner.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	after, err := faultCall(t, http.MethodPost, other.base+"/verify/schema", verifyArgs(t, "after-stop"), 30*time.Second)
	if err != nil || after.status != http.StatusOK {
		t.Fatalf("verification once the owner resumed: %+v, %v", after, err)
	}
	owner.stdin.Close()
	_ = owner.cmd.Wait()
	_ = other.cmd.Process.Signal(syscall.SIGTERM)
	_ = other.cmd.Wait()
	stored := storedVerdicts(t, dir)
	want := map[string]bool{first.id: true, after.id: true}
	if fmt.Sprint(stored) != fmt.Sprint(want) {
		t.Errorf("stored verdicts %v, want exactly the two answered %v", stored, want)
	}
}

// TestOwnerExitIsNotAFault: when the process owning the store exits
// cleanly, the next verification at each other HTTP process is served (it
// reaches the next owner), never a 500; the verdicts of every 200 are
// stored.
func TestOwnerExitIsNotAFault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildVerifier(t)
	dir := t.TempDir()
	owner := startProc(t, bin, "--data-dir", dir)
	others := []*verifierProc{
		startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir),
		startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir),
	}
	var acked []string
	for i, p := range others {
		r, err := faultCall(t, http.MethodPost, p.base+"/verify/schema", verifyArgs(t, fmt.Sprintf("before-%d", i)), 30*time.Second)
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("verification before the exit: %+v, %v", r, err)
		}
		acked = append(acked, r.id)
	}
	owner.stdin.Close()
	if err := owner.cmd.Wait(); err != nil {
		t.Fatalf("the owner exited with %v", err)
	}
	for i, p := range others {
		r, err := faultCall(t, http.MethodPost, p.base+"/verify/schema", verifyArgs(t, fmt.Sprintf("after-%d", i)), 30*time.Second)
		if err != nil || r.status != http.StatusOK {
			t.Errorf("process %d: the first verification after the owner exited = %+v, %v; want 200", i, r, err)
			continue
		}
		acked = append(acked, r.id)
	}
	for _, p := range others {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	}
	stored := storedVerdicts(t, dir)
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged verdict %s is not stored", id)
		}
	}
	if len(stored) != len(acked) {
		t.Errorf("%d verdicts stored, want the %d acknowledged", len(stored), len(acked))
	}
}

// TestOwnerKilledUnderLoad: the process owning the store is killed
// (SIGKILL) while two HTTP processes serve a stream of verifications. No
// call is answered 500; every 200's verdict is stored, and no verdict is
// stored for a call whose client was told it failed.
func TestOwnerKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildVerifier(t)
	dir := t.TempDir()
	owner := startProc(t, bin, "--data-dir", dir)
	others := []*verifierProc{
		startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir, "--free-per-day", "100000"),
		startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir, "--free-per-day", "100000"),
	}
	var (
		mu       sync.Mutex
		acked    []string
		refused  []string // 503s: told to send again
		faults   []string // anything else
		inFlight int
		killedAt time.Time
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range others {
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					start := time.Now()
					r, err := faultCall(t, http.MethodPost, p.base+"/verify/schema", verifyArgs(t, fmt.Sprintf("p%d-w%d-%d", i, w, n)), 60*time.Second)
					mu.Lock()
					if !killedAt.IsZero() && start.Before(killedAt) && time.Now().After(killedAt) {
						inFlight++
					}
					switch {
					case err == nil && r.status == http.StatusOK:
						acked = append(acked, r.id)
					case err == nil && r.status == http.StatusServiceUnavailable && r.retryable && r.retryAfter != "":
						refused = append(refused, r.body)
					default:
						faults = append(faults, fmt.Sprintf("%d %v: %s", r.status, err, r.body))
					}
					mu.Unlock()
				}
			}()
		}
	}
	time.Sleep(time.Second)
	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	if err := owner.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = owner.cmd.Wait()
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	for _, p := range others {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	}
	t.Logf("%d answered, %d refused with 503, %d calls in flight at the kill", len(acked), len(refused), inFlight)
	if len(faults) > 0 {
		t.Errorf("%d calls answered neither 200 nor a retryable 503:\n%s", len(faults), strings.Join(faults, "\n"))
	}
	stored := storedVerdicts(t, dir)
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged verdict %s is not stored", id)
		}
	}
	if len(stored) != len(acked) {
		t.Errorf("%d verdicts stored, but %d calls were answered 200: a verdict is stored for a call whose client was told it failed", len(stored), len(acked))
	}
}

// TestPostgresRestartIsUnavailable: a replica serving a stream of
// verifications while its PostgreSQL server restarts (down for two
// seconds) answers every call 200 or 503 unavailable with Retry-After —
// never 500 —, serves again once the database is back, and every
// acknowledged verdict is stored.
func TestPostgresRestartIsUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, and a PostgreSQL server")
	}
	pgtest.SkipIfMissing(t)
	bin := buildVerifier(t)
	cluster, err := pgtest.Start() // its own: the restart must not reach other tests
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	url := cluster.NewDatabase(t)
	r := startReplica(t, bin, url, replicaKey, "--free-per-day", "100000", "--verify-timeout", "5s")
	var (
		mu                   sync.Mutex
		acked                []string
		refused, afterOutage int
		faults               []string
		restarted            bool
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				reply, err := faultCall(t, http.MethodPost, r.base+"/verify/schema", verifyArgs(t, fmt.Sprintf("w%d-%d", w, n)), 60*time.Second)
				mu.Lock()
				switch {
				case err == nil && reply.status == http.StatusOK:
					acked = append(acked, reply.id)
					if restarted {
						afterOutage++
					}
				case err == nil && reply.status == http.StatusServiceUnavailable && reply.code == "unavailable" && reply.retryable && reply.retryAfter != "":
					refused++
				default:
					faults = append(faults, fmt.Sprintf("%d %v: %s", reply.status, err, reply.body))
				}
				mu.Unlock()
				if err == nil && reply.status == http.StatusServiceUnavailable {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	if err := cluster.Restart(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	restarted = true
	mu.Unlock()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d answered, %d refused with 503 across the restart, %d answered after it", len(acked), refused, afterOutage)
	if len(faults) > 0 {
		t.Errorf("%d calls answered neither 200 nor 503 unavailable with Retry-After:\n%s", len(faults), strings.Join(faults[:min(len(faults), 10)], "\n"))
	}
	if refused == 0 {
		t.Error("no call was refused while the database was down: the outage was not seen")
	}
	if afterOutage == 0 {
		t.Error("no call was answered once the database was back")
	}
	st := openStoreAt(t, url)
	for _, id := range acked {
		if _, err := st.Receipt(context.Background(), id); err != nil {
			t.Errorf("acknowledged verdict %s: %v", id, err)
		}
	}
}
