package tools

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewLimiter(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		cap  int
	}{
		{"no bound", 0, 0},
		{"negative is no bound", -3, 0},
		{"one", 1, 1},
		{"eight", 8, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewLimiter(tt.n).Cap(); got != tt.cap {
				t.Errorf("NewLimiter(%d).Cap() = %d, want %d", tt.n, got, tt.cap)
			}
		})
	}
	if DefaultMaxConcurrent() < 4 {
		t.Errorf("DefaultMaxConcurrent() = %d, want at least 4", DefaultMaxConcurrent())
	}
}

// TestLimiterRefusesExcess fills every slot and checks that a verification
// over REST, over MCP and through the typed core gets the retryable 503 in
// the one error shape, then that a freed slot serves again.
func TestLimiterRefusesExcess(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Limiter = NewLimiter(2)
	var held []func()
	for range 2 {
		release, err := f.svc.Limiter.acquire(t.Context(), 0)
		if err != nil {
			t.Fatalf("acquire on a free limiter: %v", err)
		}
		held = append(held, release)
	}
	body := invoice(t, "invoice-pass.json", map[string]any{"task_id": marker})

	resp, got := f.postJSON(t, "/verify/schema", body)
	e := checkErrorShape(t, resp, got, http.StatusServiceUnavailable, CodeUnavailable)
	if e["retryable"] != true || e["retry_after"] != float64(BusyRetryAfter) || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("busy 503 = %s (Retry-After %q); want retryable after %d s", got, resp.Header.Get("Retry-After"), BusyRetryAfter)
	}

	_, err := f.svc.Verify(t.Context(), body)
	if e := AsError(err); err == nil || e.Status != http.StatusServiceUnavailable || e.Code != CodeUnavailable {
		t.Errorf("Service.Verify while full = %v, want 503 %s", err, CodeUnavailable)
	}

	c := connectMCP(t, f.svc)
	res := c.call(t, ToolVerifySchema, string(body))
	if !res.IsError || structured(t, res)["code"] != CodeUnavailable {
		t.Errorf("verify_schema while full: isError %v, %v; want the %s error", res.IsError, res.StructuredContent, CodeUnavailable)
	}
	if strings.Contains(string(structuredJSON(t, res)), marker) {
		t.Errorf("the MCP error echoes the request: %s", structuredJSON(t, res))
	}

	held[0]()
	if f.svc.Limiter.InUse() != 1 {
		t.Fatalf("InUse() = %d after one release, want 1", f.svc.Limiter.InUse())
	}
	if resp, got := f.postJSON(t, "/verify/schema", body); resp.StatusCode != http.StatusOK {
		t.Errorf("with a free slot: status %d, want 200; body %s", resp.StatusCode, got)
	}
	held[1]()
	if f.svc.Limiter.InUse() != 0 {
		t.Errorf("InUse() = %d after every release, want 0", f.svc.Limiter.InUse())
	}
}

// TestLimiterUnderLoad sends many verifications at once through a limiter
// smaller than the load: each gets a verdict or the busy 503, never
// anything else, at least one is served, and every slot is free afterwards.
func TestLimiterUnderLoad(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Limiter = NewLimiter(2)
	body := invoice(t, "invoice-pass.json", nil)
	const clients = 16
	statuses := make([]int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/verify/schema", strings.NewReader(string(body)))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	served := 0
	for i, s := range statuses {
		switch s {
		case http.StatusOK:
			served++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("client %d: status %d, want 200 or 503", i, s)
		}
	}
	if served == 0 {
		t.Errorf("no request was served: %v", statuses)
	}
	if n := f.svc.Limiter.InUse(); n != 0 {
		t.Errorf("InUse() = %d after the load, want 0", n)
	}
}

// TestQueuedLimiterWaitsThenRefuses: with every slot taken, a verification
// waits in the waiting room and is served when a slot frees; past the wait,
// or with the waiting room full, it gets the 503.
func TestQueuedLimiterWaitsThenRefuses(t *testing.T) {
	l := NewQueuedLimiter(1, 1, 300*time.Millisecond, nil)
	hold, err := l.acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Error, 1)
	go func() {
		release, err := l.acquire(t.Context(), 0)
		if err == nil {
			release()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // the waiter takes the one waiting place
	if _, err := l.acquire(t.Context(), 0); err == nil || err.Code != CodeUnavailable {
		t.Errorf("acquire with the waiting room full = %v, want the 503", err)
	}
	hold()
	if err := <-got; err != nil {
		t.Errorf("the waiting verification got %v, want a slot once one was freed", err)
	}

	hold, _ = l.acquire(t.Context(), 0)
	defer hold()
	start := time.Now()
	if _, err := l.acquire(t.Context(), 0); err == nil || err.Code != CodeUnavailable {
		t.Errorf("acquire past the wait = %v, want the 503", err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("refused after %v, want a wait of about 300ms first", waited)
	}
}

// TestLimiterReportsRefusalsCounted: refusals are logged as one warning per
// ShedReportEvery with their count, and the request lines of those 503s
// (and of requests whose client went away) are at INFO, not WARN.
func TestLimiterReportsRefusalsCounted(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	l := NewQueuedLimiter(1, 0, 0, log)
	hold, err := l.acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := l.acquire(t.Context(), 0); !isBusy(err) {
			t.Fatalf("acquire with every slot taken = %v, want the busy 503", err)
		}
	}
	if got := strings.Count(logs.String(), "level=WARN"); got != 1 || !strings.Contains(logs.String(), "refused=1 ") {
		t.Errorf("after 5 refusals the log has %d warnings, want 1 reporting the first refusal:\n%s", got, logs.String())
	}
	l.report.Store(0) // the report period is over
	hold()
	if got := strings.Count(logs.String(), "level=WARN"); got != 2 || !strings.Contains(logs.String(), "refused=4 ") {
		t.Errorf("after the period the log has %d warnings, want a second one counting the other 4:\n%s", got, logs.String())
	}

	logs.Reset()
	f := newHTTPFixture(t, &HTTPOptions{Log: log}, nil)
	f.svc.Limiter = NewLimiter(1)
	hold, err = f.svc.Limiter.acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	if resp, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503; body %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "level=INFO msg=\"http request\"") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("the request line of a busy 503 is not at INFO:\n%s", logs.String())
	}
}

// TestLimiterReleaseOnce: the release function gives its slot back once,
// however often it is called, so a caller can free the slot early and
// still defer it.
func TestLimiterReleaseOnce(t *testing.T) {
	l := NewLimiter(2)
	r1, err := l.acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r1()
	r1()
	if n := l.InUse(); n != 1 {
		t.Errorf("InUse() = %d after releasing one of two slots twice, want 1", n)
	}
	r2()
	if n := l.InUse(); n != 0 {
		t.Errorf("InUse() = %d after releasing both, want 0", n)
	}
}

// TestLimiterFullTurnsAwayFirst: with every slot and waiting place taken, a
// verification is refused before its body is decoded and before the gate
// sees it (a malformed body gets the 503, not a 422).
func TestLimiterFullTurnsAwayFirst(t *testing.T) {
	g := &gateLog{}
	f := newHTTPFixture(t, &HTTPOptions{Gate: g.gate}, nil)
	f.svc.Limiter = NewLimiter(1)
	hold, err := f.svc.Limiter.acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{invoice(t, "invoice-pass.json", nil), []byte(`{"task_id":`)} {
		resp, out := f.postJSON(t, "/verify/schema", body)
		checkErrorShape(t, resp, out, http.StatusServiceUnavailable, CodeUnavailable)
	}
	if calls := g.seen(); len(calls) != 0 {
		t.Errorf("the gate saw %d refused calls, want none", len(calls))
	}
	hold()
	if resp, out := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil)); resp.StatusCode != http.StatusOK {
		t.Errorf("with a slot free: status %d, want 200; body %s", resp.StatusCode, out)
	}
}

// TestLimiterMemory checks the memory budget of a Limiter: a verification
// is admitted only when its expected memory fits beside the running ones,
// waits for memory as for a slot (and gets the 503 past the wait), is not
// held up by a larger one waiting before it, and runs alone when it is
// larger than the whole budget; what is taken is given back.
func TestLimiterMemory(t *testing.T) {
	const wait = 300 * time.Millisecond
	tests := []struct {
		name    string
		held    []int64 // taken first, in order, and held
		next    int64   // then asked for
		waiting int64   // asked for before next, by a verification left waiting (0: none)
		admit   bool    // whether next is admitted at once
	}{
		{"fits beside the running", []int64{60}, 40, 0, true},
		{"does not fit: waits, then the 503", []int64{60}, 41, 0, false},
		{"a small one passes a large one waiting", []int64{60}, 30, 50, true},
		{"larger than the budget runs alone", nil, 500, 0, true},
		{"larger than the budget waits for the others", []int64{1}, 500, 0, false},
		{"none left", []int64{100}, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewQueuedLimiter(8, 8, wait, nil).WithMemory(100)
			var releases []func()
			for _, m := range tt.held {
				r, err := l.acquire(t.Context(), m)
				if err != nil {
					t.Fatalf("acquire(%d) = %v", m, err)
				}
				releases = append(releases, r)
			}
			waiter := make(chan *Error, 1)
			if tt.waiting > 0 {
				go func() {
					r, err := l.acquire(t.Context(), tt.waiting)
					if err == nil {
						r()
					}
					waiter <- err
				}()
				time.Sleep(50 * time.Millisecond) // it waits for memory
			}
			start := time.Now()
			r, err := l.acquire(t.Context(), tt.next)
			took := time.Since(start)
			if tt.admit && (err != nil || took > wait/2) {
				t.Errorf("acquire(%d) = %v after %v, want admitted at once", tt.next, err, took)
			}
			if !tt.admit && (err == nil || err.Code != CodeUnavailable || took < wait*3/4) {
				t.Errorf("acquire(%d) = %v after %v, want the 503 after a wait of about %v", tt.next, err, took, wait)
			}
			if err == nil {
				r()
				r() // a second call gives nothing back
			}
			for _, r := range releases {
				r()
			}
			if tt.waiting > 0 {
				if err := <-waiter; err != nil {
					t.Errorf("the waiting verification got %v, want admitted once memory was given back", err)
				}
			}
			if n := l.MemoryInUse(); n != 0 {
				t.Errorf("MemoryInUse() = %d after every release, want 0", n)
			}
		})
	}
}

// TestExpectedMemory pins what a verification is admitted for: 64 bytes
// per byte of its request, at least 64 KiB.
func TestExpectedMemory(t *testing.T) {
	for _, tt := range []struct {
		size int
		want int64
	}{{0, 64 << 10}, {100, 64 << 10}, {1 << 20, 64 << 20}, {DefaultMaxBodyBytes, 256 << 20}} {
		if got := ExpectedMemory(tt.size); got != tt.want {
			t.Errorf("ExpectedMemory(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
}
