package main

import (
	"net/http"
	"regexp"
	"testing"
)

// TestServeHTTPLogsFirstURLs: the startup log names the URLs of /mcp, /docs
// and /llms.txt at the address actually bound (port 0 resolved), even when
// --public-url advertises another, and each of them answers.
func TestServeHTTPLogsFirstURLs(t *testing.T) {
	srv := startHTTP(t, "--public-url", "https://verifier.example")
	line := regexp.MustCompile(`msg="serving HTTP" .*`).FindString(srv.stderr.String())
	for _, tt := range []struct{ key, path string }{{"mcp", "/mcp"}, {"docs", "/docs"}, {"llms_txt", "/llms.txt"}} {
		m := regexp.MustCompile(` ` + tt.key + `=(\S+)`).FindStringSubmatch(line)
		if m == nil || m[1] != srv.base+tt.path {
			t.Errorf("startup line %q: %s = %v, want %s", line, tt.key, m, srv.base+tt.path)
			continue
		}
		if tt.path == "/mcp" {
			continue // POST only; the MCP tests call it
		}
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", m[1], resp.StatusCode)
		}
	}
}
