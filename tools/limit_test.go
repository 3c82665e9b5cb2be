package tools

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/engine/ecmaregex"
	"github.com/verifier-dev/verifier/engine/schema"
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

// TestQueuedLimiterWaitsThenRefuses: with every slot taken, a verification
// waits in the waiting room and is served when a slot frees; past the wait,
// or with the waiting room full, it gets the 503.
func TestQueuedLimiterWaitsThenRefuses(t *testing.T) {
	l := NewQueuedLimiter(1, 1, 300*time.Millisecond, nil)
	hold, err := l.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Error, 1)
	go func() {
		release, err := l.Acquire(t.Context(), 0)
		if err == nil {
			release()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // the waiter takes the one waiting place
	if _, err := l.Acquire(t.Context(), 0); err == nil || err.Code != CodeUnavailable {
		t.Errorf("acquire with the waiting room full = %v, want the 503", err)
	}
	hold()
	if err := <-got; err != nil {
		t.Errorf("the waiting verification got %v, want a slot once one was freed", err)
	}

	hold, _ = l.Acquire(t.Context(), 0)
	defer hold()
	start := time.Now()
	if _, err := l.Acquire(t.Context(), 0); err == nil || err.Code != CodeUnavailable {
		t.Errorf("acquire past the wait = %v, want the 503", err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("refused after %v, want a wait of about 300ms first", waited)
	}
}

// TestLimiterReportsRefusalsCounted: refusals are logged as one warning per
// ShedReportEvery with their count (TestShedRequestLineAtInfo: the request
// lines of those 503s are at INFO, not WARN).
func TestLimiterReportsRefusalsCounted(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	l := NewQueuedLimiter(1, 0, 0, log)
	hold, err := l.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := l.Acquire(t.Context(), 0); !IsBusy(err) {
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
}

// TestLimiterReleaseOnce: the release function gives its slot back once,
// however often it is called, so a caller can free the slot early and
// still defer it.
func TestLimiterReleaseOnce(t *testing.T) {
	l := NewLimiter(2)
	r1, err := l.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Acquire(t.Context(), 0)
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
				r, err := l.Acquire(t.Context(), m)
				if err != nil {
					t.Fatalf("acquire(%d) = %v", m, err)
				}
				releases = append(releases, r)
			}
			waiter := make(chan *Error, 1)
			if tt.waiting > 0 {
				go func() {
					r, err := l.Acquire(t.Context(), tt.waiting)
					if err == nil {
						r()
					}
					waiter <- err
				}()
				time.Sleep(50 * time.Millisecond) // it waits for memory
			}
			start := time.Now()
			r, err := l.Acquire(t.Context(), tt.next)
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
	}{{0, 64 << 10}, {100, 64 << 10}, {1 << 20, 64 << 20}, {4 << 20, 256 << 20}} {
		if got := ExpectedMemory(tt.size); got != tt.want {
			t.Errorf("ExpectedMemory(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
}

// TestRequestMemoryCountsPatterns checks that a verification whose schema
// may hold patterns is admitted for the heap compiling them may take, far
// more than its bytes suggest, before anything compiles; one without
// patterns for its size alone.
func TestRequestMemoryCountsPatterns(t *testing.T) {
	s := &Service{Engine: engine.New(nil)}
	compiling := int64(2 * ecmaregex.InstBytes * schema.DefaultMaxPatternsSize)
	for _, tt := range []struct {
		name, schema string
		want         int64
	}{
		{"no pattern", `{"type":"string","maxLength":5}`, ExpectedMemory(0)},
		{"a pattern", `{"pattern":"^[a-z]{1,1000}$"}`, ExpectedMemory(0) + compiling},
		{"patternProperties", `{"patternProperties":{"^x":true}}`, ExpectedMemory(0) + compiling},
		{"a key spelt with an escape", `{"p\u0061ttern":"^[a-z]{1,1000}$"}`, ExpectedMemory(0) + compiling},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := s.Engine.DecodeRequest([]byte(`{"task_id":"t","expected_schema":` + tt.schema + `,"submitted_output":"a"}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.requestMemory(req); got != tt.want {
				t.Errorf("requestMemory = %d, want %d", got, tt.want)
			}
		})
	}
}
