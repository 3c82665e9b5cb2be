package rest

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/internal/diskfault"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
)

// TestHTTPHealthAfterFailedWrite: when the store's file stops taking
// writes (as on a full disk), a verification gets 503 and GET /health
// answers 503 with the cause and no file name, until a write succeeds again.
func TestHTTPHealthAfterFailedWrite(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	path := f.svc.Store.(*store.Bolt).Path()
	verify := func() int {
		resp, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil))
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("POST /verify/schema = %d %s", resp.StatusCode, body)
		}
		return resp.StatusCode
	}
	health := func() (*http.Response, []byte) { return f.do(t, http.MethodGet, "/health", nil, nil) }

	if got := verify(); got != http.StatusOK {
		t.Fatalf("POST /verify/schema before the fault = %d", got)
	}
	if resp, body := health(); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health before the fault = %d %s", resp.StatusCode, body)
	}

	undo, err := diskfault.BreakWrites(path)
	if err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := undo(); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(restore)
	if got := verify(); got != http.StatusServiceUnavailable {
		t.Fatalf("POST /verify/schema with the store refusing writes = %d, want 503", got)
	}
	resp, body := health()
	e := checkErrorShape(t, resp, body, http.StatusServiceUnavailable, tools.CodeUnavailable)
	msg, _ := e["message"].(string)
	if !strings.Contains(msg, "last write to its store failed") {
		t.Errorf("GET /health message = %q, want the failed write", msg)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Error("GET /health 503 without Retry-After")
	}
	for _, leak := range []string{filepath.Dir(path), filepath.Base(path)} {
		if strings.Contains(string(body), leak) {
			t.Errorf("GET /health body names %q: %s", leak, body)
		}
	}

	restore()
	if resp, body := health(); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET /health with the disk back but no write yet = %d %s, want 503 until a write succeeds", resp.StatusCode, body)
	}
	if got := verify(); got != http.StatusOK {
		t.Fatalf("POST /verify/schema after the fault = %d", got)
	}
	if resp, body := health(); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health after a successful write = %d %s, want 200", resp.StatusCode, body)
	}
}
