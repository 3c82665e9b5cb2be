package tools

import (
	"net/http"
	"strings"
	"testing"
)

// TestCanonicalFormsAsRequests sends the canonical form of each published
// request-hash vector (every unused member written as null) as a request,
// over REST and over MCP: each is accepted and answers with the vector's
// request_hash (SPEC §1, §5).
func TestCanonicalFormsAsRequests(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	c := connectMCP(t, quietService(t, true))
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		body := readTestdata(t, "request-hash/"+name+".canonical.json")
		want := strings.TrimSpace(string(readTestdata(t, "request-hash/"+name+".sha256")))
		t.Run(name+"/REST", func(t *testing.T) {
			resp, got := f.postJSON(t, "/verify/schema", body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", resp.StatusCode, got)
			}
			if h := decodeObject(t, got)["request_hash"]; h != want {
				t.Errorf("request_hash = %v, want %s", h, want)
			}
		})
		t.Run(name+"/MCP", func(t *testing.T) {
			res := c.call(t, ToolVerifySchema, string(body))
			if res.IsError {
				t.Fatalf("isError: %s", text(res))
			}
			if h := structured(t, res)["request_hash"]; h != want {
				t.Errorf("request_hash = %v, want %s", h, want)
			}
		})
	}
}
