package rest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools"
)

// TestHTTPRootBrowserGetsHomePage: GET / from a browser (Accept: text/html)
// gets the home page, which links /check, /docs, /llms.txt and the agent
// card; any other request for / keeps the JSON 404.
func TestHTTPRootBrowserGetsHomePage(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tt := range []struct {
		name, method, path, accept string
		home                       bool
	}{
		{"browser", http.MethodGet, "/", browser, true},
		{"browser HEAD", http.MethodHead, "/", browser, true},
		{"text/html alone", http.MethodGet, "/", "TEXT/HTML; charset=utf-8", true},
		{"no Accept", http.MethodGet, "/", "", false},
		{"JSON client", http.MethodGet, "/", "application/json", false},
		{"anything", http.MethodGet, "/", "*/*", false},
		{"html refused", http.MethodGet, "/", "text/html;q=0, application/json", false},
		{"browser POST", http.MethodPost, "/", browser, false},
		{"browser, other path", http.MethodGet, "/nothing-here", browser, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, f.srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.home {
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
					t.Fatalf("%s %s = %d %q, want the home page", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				checkPageCSP(t, resp)
				for _, link := range []string{`href="/check"`, `href="/docs"`, `href="/llms.txt"`, `href="/.well-known/agent-card.json"`} {
					if tt.method == http.MethodGet && !strings.Contains(string(body), link) {
						t.Errorf("the home page lacks the link %s", link)
					}
				}
			} else {
				if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%s %s = %d %q, want the JSON 404", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				var e tools.Error
				if err := json.Unmarshal(body, &e); err != nil || e.Code != tools.CodeNotFound {
					t.Errorf("body %s: want the not_found error (%v)", body, err)
				}
			}
			if tt.path == "/" && tt.method != http.MethodPost && resp.Header.Get("Vary") != "Accept" {
				t.Errorf("Vary = %q, want Accept: the answer at / depends on it", resp.Header.Get("Vary"))
			}
		})
	}
}
