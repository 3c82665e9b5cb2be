package rest

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHTTPAgentPageReceiptLinks: each recent verdict on an agent's page
// links /check with its verification_id, which the checker loads, beside
// the stored receipt's JSON.
func TestHTTPAgentPageReceiptLinks(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Now = func() time.Time { return pagesNow }
	const agent = "seller-links"
	history := agentHistory(agent)
	putVerdicts(t, f.svc.Store, history)
	_, body := f.do(t, http.MethodGet, "/agents/"+agent, nil, nil)
	var checks []string
	for _, href := range attrs(string(body), `<a [^>]*>`, "href") {
		if strings.HasPrefix(href, "/check?") {
			checks = append(checks, href)
		}
	}
	if len(checks) != len(history) {
		t.Fatalf("the page has %d links to /check, want one per verdict (%d): %v", len(checks), len(history), checks)
	}
	for _, v := range history {
		want := "/check?id=" + v.VerificationID
		found := false
		for _, href := range checks {
			u, err := url.Parse(strings.ReplaceAll(href, "&amp;", "&"))
			if err == nil && u.Path == "/check" && u.Query().Get("id") == v.VerificationID {
				found = true
			}
		}
		if !found {
			t.Errorf("no link %s among %v", want, checks)
		}
		if !bytes.Contains(body, []byte(`href="/receipts/`+v.VerificationID+`"`)) {
			t.Errorf("no link to the stored receipt %s", v.VerificationID)
		}
	}
	// The link opens the checker, whose script loads ?id=.
	resp, _ := f.do(t, http.MethodGet, checks[0], nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("GET %s = %d %q", checks[0], resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	_, js := f.do(t, http.MethodGet, "/docs/check.js", nil, nil)
	if !bytes.Contains(js, []byte("new URLSearchParams(location.search).get('id')")) || !bytes.Contains(js, []byte("fetch(`/receipts/${encodeURIComponent(id)}`")) {
		t.Errorf("check.js does not load the receipt its ?id= names")
	}
}

// TestHTTPPagesSayWhatCheckSends: the home page and /check say the same of
// what the checker sends (the verification_id), and neither says it sends
// nothing.
func TestHTTPPagesSayWhatCheckSends(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	const sends = "the page sends only the receipt's verification_id"
	for _, p := range []string{"/check", "/"} {
		_, body := f.do(t, http.MethodGet, p, nil, http.Header{"Accept": {"text/html"}})
		text := strings.Join(strings.Fields(string(body)), " ")
		if !strings.Contains(text, sends) {
			t.Errorf("%s does not say %q", p, sends)
		}
		if strings.Contains(text, "sends nothing") {
			t.Errorf("%s says the checker sends nothing", p)
		}
	}
}

// TestHTTPFavicon: /favicon.ico and the icon every page links are one
// small SVG, served as image/svg+xml with a validator.
func TestHTTPFavicon(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Now = func() time.Time { return pagesNow }
	putVerdicts(t, f.svc.Store, agentHistory("seller-icon"))
	resp, icon := f.do(t, http.MethodGet, "/favicon.ico", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" || resp.Header.Get("ETag") == "" {
		t.Fatalf("GET /favicon.ico = %d %q, ETag %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("ETag"))
	}
	if len(icon) == 0 || len(icon) > 1024 {
		t.Errorf("the icon is %d bytes, want a small one", len(icon))
	}
	var root struct {
		XMLName xml.Name
		ViewBox string `xml:"viewBox,attr"`
	}
	if err := xml.Unmarshal(icon, &root); err != nil || root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" || root.ViewBox == "" {
		t.Errorf("the icon is not an SVG document with a viewBox (%v, %+v)", err, root)
	}
	if again, _ := f.do(t, http.MethodGet, "/favicon.ico", nil, http.Header{"If-None-Match": {resp.Header.Get("ETag")}}); again.StatusCode != http.StatusNotModified {
		t.Errorf("GET /favicon.ico with its ETag = %d, want 304", again.StatusCode)
	}
	for _, p := range []string{"/", "/check", "/agents/seller-icon", "/agents/nobody", "/docs"} {
		_, body := f.do(t, http.MethodGet, p, nil, http.Header{"Accept": {"text/html"}})
		hrefs := attrs(string(body), `<link rel="icon"[^>]*>`, "href")
		if len(hrefs) != 1 {
			t.Errorf("%s links %d icons, want one", p, len(hrefs))
			continue
		}
		ref, err := url.Parse(hrefs[0])
		if err != nil {
			t.Fatal(err)
		}
		base, _ := url.Parse(f.srv.URL + p)
		resp, linked := f.do(t, http.MethodGet, base.ResolveReference(ref).Path, nil, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" || !bytes.Equal(linked, icon) {
			t.Errorf("%s links icon %s: %d %q, same as /favicon.ico: %v", p, hrefs[0], resp.StatusCode, resp.Header.Get("Content-Type"), bytes.Equal(linked, icon))
		}
	}
}
