package mcpserver

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestMCPHandlerSessionLogsAtDebug: the SDK's per-request session lines
// over stateless HTTP are DEBUG, not INFO; warnings stay warnings.
func TestMCPHandlerSessionLogsAtDebug(t *testing.T) {
	for _, tt := range []struct {
		name  string
		level slog.Level
		want  string // in the log; "" for no session lines at all
	}{
		{"info", slog.LevelInfo, ""},
		{"debug", slog.LevelDebug, `level=DEBUG msg="server session connected"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs testkit.SyncBuffer
			svc := testkit.NewTestService(t, false)
			svc.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: tt.level}))
			ts := httptest.NewServer(NewMCPHandler(svc))
			defer ts.Close()
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ts.Close() // the session lines are written by the time it returns
			got := logs.String()
			if tt.want == "" && strings.Contains(got, "session") || !strings.Contains(got, tt.want) {
				t.Errorf("logs at %v = %q, want %q", tt.level, got, tt.want)
			}
			if strings.Contains(got, "level=INFO") {
				t.Errorf("logs hold an INFO line: %q", got)
			}
		})
	}
	var buf bytes.Buffer
	log := slog.New(infoAsDebug{slog.NewTextHandler(&buf, nil)})
	log.Warn("kept")
	log.Info("dropped")
	if got := buf.String(); !strings.Contains(got, `level=WARN msg=kept`) || strings.Contains(got, "dropped") {
		t.Errorf("infoAsDebug over an INFO handler wrote %q, want the warning alone", got)
	}
}
