package mcpwire

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestWriteRefusal: the refusal is one JSON-RPC error with a null id, the
// Invalid Request code and the message as a JSON string, however the
// message is spelled, with its length and media type in the headers.
func TestWriteRefusal(t *testing.T) {
	for _, message := range []string{"Forbidden.", `quote " backslash \ newline` + "\n", "unicode ±2^53 \u2028"} {
		rec := httptest.NewRecorder()
		WriteRefusal(rec, http.StatusForbidden, message)
		var frame struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &frame); err != nil {
			t.Fatalf("%q: the body is not JSON: %v: %s", message, err, rec.Body)
		}
		if rec.Code != http.StatusForbidden || frame.JSONRPC != "2.0" || string(frame.ID) != "null" ||
			frame.Error.Code != InvalidRequest || frame.Error.Message != message {
			t.Errorf("%q: %d %s", message, rec.Code, rec.Body)
		}
		if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("%q: headers %v", message, rec.Header())
		}
	}
}

// TestBody: the body WithBody keeps is the one Body returns; without it,
// nil.
func TestBody(t *testing.T) {
	if got := Body(context.Background()); got != nil {
		t.Errorf("Body of a bare context = %q", got)
	}
	if got := Body(WithBody(context.Background(), []byte(`{}`))); string(got) != `{}` {
		t.Errorf("Body = %q, want {}", got)
	}
}
