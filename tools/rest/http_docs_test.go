package rest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

func TestHTTPAgentCard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if _, err := signing.OpenKeyStore(dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.RotateKey(dir, nil); err != nil {
		t.Fatal(err)
	}
	keys, err := signing.OpenKeyStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newHTTPFixtureKeys(t, keys, nil, nil)
	resp, card := f.do(t, http.MethodGet, "/.well-known/agent-card.json", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET agent card = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || !strings.Contains(resp.Header.Get("Cache-Control"), "max-age=") {
		t.Errorf("ETag %q, Cache-Control %q: want both", etag, resp.Header.Get("Cache-Control"))
	}
	legacyResp, legacy := f.do(t, http.MethodGet, "/.well-known/agent.json", nil, nil)
	if legacyResp.StatusCode != http.StatusOK || !bytes.Equal(legacy, card) || legacyResp.Header.Get("ETag") != etag {
		t.Errorf("/.well-known/agent.json differs from /.well-known/agent-card.json")
	}
	notModified, _ := f.do(t, http.MethodGet, "/.well-known/agent-card.json", nil, http.Header{"If-None-Match": {etag}})
	if notModified.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag = %d, want 304", notModified.StatusCode)
	}

	var c tools.AgentCard
	if err := json.Unmarshal(card, &c); err != nil {
		t.Fatal(err)
	}
	m := decodeObject(t, card)
	for _, k := range []string{"name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		if _, ok := m[k]; !ok {
			t.Errorf("the card lacks %s", k)
		}
	}
	if len(c.SupportedInterfaces) == 0 || c.SupportedInterfaces[0].URL != testPublicURL+"/mcp" {
		t.Errorf("supportedInterfaces = %+v, want %s/mcp first", c.SupportedInterfaces, testPublicURL)
	}

	// Every key ever used is published, and the card reads back as a key source.
	published, err := signing.KeysFromAgentCard(card)
	if err != nil {
		t.Fatal(err)
	}
	if len(published) != 2 || len(keys.PublicKeys()) != 2 {
		t.Fatalf("card publishes %d keys, store has %d; want both of the rotated store", len(published), len(keys.PublicKeys()))
	}
	for _, pk := range keys.PublicKeys() {
		want, _ := keys.Lookup(pk.KeyVersion)
		if got, ok := published[pk.KeyVersion]; !ok || !got.Equal(want) {
			t.Errorf("key %s is not published as it is", pk.KeyVersion)
		}
	}
	ext := c.Capabilities.Extensions
	if len(ext) != 1 || !strings.HasPrefix(ext[0].URI, signing.AttestationExtensionURIPrefix) {
		t.Fatalf("extensions = %+v", ext)
	}

	// The vectors the card publishes are the hosted service's
	// (testdata/request-hash/), and the service reproduces them.
	vectors := ext[0].Params.RequestHashTestVectors
	if len(vectors) != 3 {
		t.Fatalf("%d request-hash vectors, want 3", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			for _, suffix := range []string{".request.json", ".canonical.json", ".sha256"} {
				vendored, err := os.ReadFile(filepath.Join(testkit.SuitesDir, "request-hash", v.Name+suffix))
				if err != nil {
					t.Fatal(err)
				}
				embedded, err := docsFS.ReadFile("docs/vectors/" + v.Name + suffix)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(vendored, embedded) {
					t.Errorf("embedded %s%s differs from testdata/request-hash", v.Name, suffix)
				}
			}
			sum := sha256.Sum256([]byte(v.Canonical))
			if hex.EncodeToString(sum[:]) != v.RequestHash {
				t.Errorf("sha256(canonical) = %x, card says %s", sum, v.RequestHash)
			}
			req, err := f.svc.Engine.DecodeRequest(v.Request)
			if err != nil {
				t.Fatal(err)
			}
			hashes, err := f.svc.Engine.Hashes(req, signing.HashCanonical)
			if err != nil {
				t.Fatal(err)
			}
			if hashes.Request != v.RequestHash {
				t.Errorf("request_hash = %s, vector %s", hashes.Request, v.RequestHash)
			}
		})
	}

	// One skill per MCP tool.
	_, list := f.do(t, http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	var tools struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(list, &tools); err != nil {
		t.Fatal(err)
	}
	var toolNames, skillIDs []string
	for _, tool := range tools.Result.Tools {
		toolNames = append(toolNames, tool.Name)
	}
	for _, s := range c.Skills {
		skillIDs = append(skillIDs, s.ID)
	}
	sort.Strings(toolNames)
	sort.Strings(skillIDs)
	if diff := cmp.Diff(toolNames, skillIDs); diff != "" || len(toolNames) == 0 {
		t.Errorf("skills differ from the MCP tools (-tools +skills):\n%s", diff)
	}
}

// openAPIDoc fetches and decodes the served OpenAPI document.
func openAPIDoc(t *testing.T, f *httpFixture) (raw []byte, doc map[string]any) {
	t.Helper()
	resp, raw := f.do(t, http.MethodGet, "/openapi.json", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		t.Fatalf("GET /openapi.json = %d, ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
	return raw, decodeObject(t, raw)
}

// documentedOps lists "method path" of every operation of doc.
func documentedOps(doc map[string]any) []string {
	var ops []string
	for p, item := range doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			ops = append(ops, method+" "+p)
		}
	}
	sort.Strings(ops)
	return ops
}

func TestHTTPOpenAPIRoutes(t *testing.T) {
	extra := HTTPRoute{
		Pattern: "GET /.well-known/x402",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "{}") }),
		Operation: []byte(`{"operationId":"getX402","summary":"Paid routes","security":[],
			"responses":{"200":{"description":"The paid routes."},"default":{"$ref":"#/components/responses/Error"}}}`),
	}
	for _, tt := range []struct {
		name  string
		extra []HTTPRoute
	}{{"built-in routes", nil}, {"with an extra route", []HTTPRoute{extra}}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHTTPFixture(t, &HTTPOptions{Routes: tt.extra}, nil)
			_, doc := openAPIDoc(t, f)
			var served []string
			for _, p := range f.h.Patterns() {
				method, path, ok := splitPattern(p)
				if !ok {
					t.Errorf("route %q has no method", p)
					continue
				}
				served = append(served, method+" "+path)
			}
			sort.Strings(served)
			if diff := cmp.Diff(served, documentedOps(doc)); diff != "" {
				t.Errorf("served routes (-) and documented operations (+) differ:\n%s", diff)
			}
			// The mux really routes every documented operation to its pattern.
			wildcard := regexp.MustCompile(`\{[^}]+\}`)
			for _, op := range documentedOps(doc) {
				method, path, _ := strings.Cut(op, " ")
				req := httptest.NewRequest(strings.ToUpper(method), wildcard.ReplaceAllString(path, "x"), nil)
				if _, pattern := f.h.mux.Handler(req); pattern == "" {
					t.Errorf("%s is documented but the mux does not route it", op)
				}
			}
			servers := doc["servers"].([]any)
			if servers[0].(map[string]any)["url"] != testPublicURL || doc["info"].(map[string]any)["version"] != "test" {
				t.Errorf("servers %v, info %v: want %s and version test", servers, doc["info"], testPublicURL)
			}
		})
	}
}

func TestHTTPExtraRouteErrors(t *testing.T) {
	ok := http.NotFoundHandler()
	for _, tt := range []struct {
		name  string
		route HTTPRoute
	}{
		{"no method", HTTPRoute{Pattern: "/x", Handler: ok, Operation: []byte(`{}`)}},
		{"operation not JSON", HTTPRoute{Pattern: "GET /x", Handler: ok, Operation: []byte(`{`)}},
		{"already documented", HTTPRoute{Pattern: "GET /health", Handler: ok, Operation: []byte(`{}`)}},
		{"no handler", HTTPRoute{Pattern: "GET /x", Operation: []byte(`{}`)}},
		{"bad pattern", HTTPRoute{Pattern: "GET /x/{", Handler: ok, Operation: []byte(`{}`)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHTTPFixture(t, nil, nil)
			if _, err := NewHTTPHandler(f.svc, withMCP(f.svc, &HTTPOptions{Routes: []HTTPRoute{tt.route}})); err == nil {
				t.Errorf("NewHTTPHandler with route %+v: no error", tt.route)
			}
		})
	}
}

// schemaValidator checks JSON against a schema of the OpenAPI document's
// components, with the engine's own JSON Schema evaluator.
type schemaValidator struct{ components any }

func newSchemaValidator(t *testing.T, raw []byte) schemaValidator {
	t.Helper()
	doc, err := ijson.Decode(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return schemaValidator{components: doc.(map[string]any)["components"]}
}

// check validates instance against s (a schema object of the document).
func (v schemaValidator) check(t *testing.T, where string, s map[string]any, instance any) {
	t.Helper()
	root := map[string]any{"components": v.components}
	for k, val := range s {
		root[k] = val
	}
	compiled, err := schema.Compile(root, nil)
	if err != nil {
		t.Fatalf("%s: compiling its schema: %v", where, err)
	}
	res, err := compiled.Evaluate(instance)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, fl := range res.Failures {
		t.Errorf("%s: %s at %q (%s): %s", where, fl.Keyword, fl.InstancePath, fl.KeywordLocation, fl.Sentence())
	}
}

func (v schemaValidator) checkJSON(t *testing.T, where, component string, body []byte) {
	t.Helper()
	instance, err := ijson.Decode(body, nil)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	v.check(t, where, map[string]any{"$ref": "#/components/schemas/" + component}, instance)
}

func TestHTTPOpenAPIDescribesRealAnswers(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	raw, _ := openAPIDoc(t, f)
	v := newSchemaValidator(t, raw)
	for _, tt := range []struct{ file, detail string }{
		{"invoice-pass.json", "full"}, {"invoice-fail.json", "full"}, {"invoice-fail.json", "compact"},
	} {
		_, body := f.postJSON(t, "/verify/schema", invoice(t, tt.file, map[string]any{"detail": tt.detail, "agent_id": "seller-7"}))
		v.checkJSON(t, tt.file+" "+tt.detail, "Answer", body)
		id := decodeObject(t, body)["verification_id"].(string)
		_, receipt := f.do(t, http.MethodGet, "/receipts/"+id, nil, nil)
		v.checkJSON(t, "receipt", "Answer", receipt)
	}
	for _, tt := range []struct{ path, component string }{
		{"/score/seller-7", "TrustRecord"}, {"/score/nobody", "TrustRecord"},
		{"/reputation/seller-7?limit=1", "Reputation"}, {"/reputation/nobody", "Reputation"},
		{"/health", "Health"}, {"/.well-known/agent-card.json", "AgentCard"},
		{"/nope", "Error"}, {"/reputation/x?limit=0", "Error"},
	} {
		_, body := f.do(t, http.MethodGet, tt.path, nil, nil)
		v.checkJSON(t, tt.path, tt.component, body)
	}
	_, body := f.do(t, http.MethodPost, "/verify/schema", strings.NewReader(`{"task_id":1}`), jsonHeader())
	v.checkJSON(t, "422", "Error", body)
}

func TestHTTPOpenAPIExamples(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	raw, doc := openAPIDoc(t, f)
	v := newSchemaValidator(t, raw)
	typed, err := ijson.Decode(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	components := typed.(map[string]any)["components"].(map[string]any)
	resolve := func(obj map[string]any) map[string]any {
		if ref, ok := obj["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/responses/")
			return components["responses"].(map[string]any)[name].(map[string]any)
		}
		return obj
	}
	count := 0
	checkContent := func(where string, content map[string]any) {
		for ctype, media := range content {
			mt := media.(map[string]any)
			s, _ := mt["schema"].(map[string]any)
			if ex, ok := mt["example"]; ok {
				v.check(t, where+" "+ctype+" example", s, ex)
				count++
			}
			exs, _ := mt["examples"].(map[string]any)
			for name, e := range exs {
				v.check(t, where+" "+ctype+" example "+name, s, e.(map[string]any)["value"])
				count++
			}
		}
	}
	for _, op := range documentedOps(doc) {
		method, path, _ := strings.Cut(op, " ")
		o := typed.(map[string]any)["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
		if rb, ok := o["requestBody"].(map[string]any); ok {
			checkContent(op+" request", rb["content"].(map[string]any))
		}
		for status, r := range o["responses"].(map[string]any) {
			if content, ok := resolve(r.(map[string]any))["content"].(map[string]any); ok {
				checkContent(op+" "+status, content)
			}
		}
	}
	if count < 20 {
		t.Errorf("only %d examples were checked", count)
	}
	// The request examples are real requests: they verify.
	for _, name := range []string{"invoice_pass", "invoice_fail", "compact"} {
		ex := doc["paths"].(map[string]any)["/verify/schema"].(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["examples"].(map[string]any)[name].(map[string]any)["value"]
		body, _ := json.Marshal(ex)
		if _, err := f.svc.Verify(context.Background(), body); err != nil {
			t.Errorf("request example %s does not verify: %v", name, err)
		}
	}
}

func TestHTTPLLMsTxt(t *testing.T) {
	remaining := 7
	resets := time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		pricing func(*http.Request) Pricing
		want    []string
	}{
		{"neither limited nor charged", nil, []string{"This deployment neither limits nor charges calls."}},
		{"allowance, payment off", func(*http.Request) Pricing { return Pricing{Limited: true, FreePerDay: 5} },
			[]string{"Free allowance: 5 verifications per client", "rate_limited (429)", "Trust records are free."}},
		{"allowance and payment", func(*http.Request) Pricing {
			return Pricing{Limited: true, FreePerDay: 1000, Remaining: &remaining, Resets: resets, PaymentEnabled: true,
				PriceVerify: "0.02", PriceScore: "0.01", Asset: "USDC", Networks: []string{"eip155:8453", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}}
		}, []string{"1000 verifications per client", "You have 7 left today.", "resets at 2026-10-02T00:00:00Z",
			"0.02 USDC", "0.01 USDC", "eip155:8453, solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "Payment-Signature"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHTTPFixture(t, &HTTPOptions{Pricing: tt.pricing}, nil)
			resp, body := f.do(t, http.MethodGet, "/llms.txt", nil, nil)
			text := string(body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Fatalf("GET /llms.txt = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			// llmstxt.org: an H1, a blockquote summary, then H2 sections of links.
			lines := strings.Split(text, "\n")
			if lines[0] != "# Agent Output Verifier" || !strings.HasPrefix(lines[2], "> ") {
				t.Errorf("llms.txt does not start with an H1 and a blockquote:\n%s", strings.Join(lines[:3], "\n"))
			}
			for _, s := range []string{"## Routes", "## MCP tools", "## Free allowance and prices", "## Errors", "## Verifying a receipt", "## Optional"} {
				if !strings.Contains(text, "\n"+s+"\n") {
					t.Errorf("llms.txt lacks the section %q", s)
				}
			}
			want := slices.Clone(tt.want)
			for _, p := range f.h.Patterns() {
				if p != routeDocsAsset {
					want = append(want, p)
				}
			}
			for _, c := range ErrorCodes() {
				want = append(want, fmt.Sprintf("| %s | %d |", c.Code, c.Status))
			}
			want = append(want, contract.VerifySchema, contract.Record, contract.VerifyReceipt, "]("+testPublicURL+"/verify/schema)",
				signing.ContextVerify, signing.ContextTrustScore, f.svc.Keys.Current().KeyVersion())
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("llms.txt lacks %q", w)
				}
			}
		})
	}
}

func TestHTTPDocsPage(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	resp, page := f.do(t, http.MethodGet, "/docs", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	init, err := docsFS.ReadFile("docs/page/init.js")
	if err != nil {
		t.Fatal(err)
	}
	absolute := regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]`)
	for name, text := range map[string][]byte{"index.html": page, "init.js": init} {
		if m := absolute.Find(text); m != nil {
			t.Errorf("%s refers to another origin: %s", name, m)
		}
	}
	// Every file the page loads is served from the binary.
	refs := regexp.MustCompile(`(?:src|href)="(docs/[^"]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) < 4 {
		t.Fatalf("the page loads %d assets: %v", len(refs), refs)
	}
	for _, ref := range refs {
		resp, body := f.do(t, http.MethodGet, "/"+ref[1], nil, nil)
		if resp.StatusCode != http.StatusOK || len(body) == 0 || resp.Header.Get("ETag") == "" {
			t.Errorf("GET /%s = %d (%d bytes, ETag %q)", ref[1], resp.StatusCode, len(body), resp.Header.Get("ETag"))
		}
		if again, _ := f.do(t, http.MethodGet, "/"+ref[1], nil, http.Header{"If-None-Match": {resp.Header.Get("ETag")}}); again.StatusCode != http.StatusNotModified {
			t.Errorf("GET /%s with its ETag = %d, want 304", ref[1], again.StatusCode)
		}
	}
	// The vendored Swagger UI is what scripts/vendor-docs.sh wrote.
	sums, err := docsFS.ReadFile("docs/swagger-ui/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(sums)) {
		want, name, _ := strings.Cut(strings.TrimSpace(line), "  ")
		body, err := fs.ReadFile(docsFS, "docs/swagger-ui/"+name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if hex.EncodeToString(sum[:]) != want {
			t.Errorf("vendored %s does not match SHA256SUMS; run scripts/vendor-docs.sh", name)
		}
		n++
	}
	if n != 4 {
		t.Errorf("SHA256SUMS lists %d files, want 4", n)
	}
}

// TestHTTPStoreIsNotTouchedByDiscovery guards the discovery routes' promise
// of being cheap: they never read the store.
func TestHTTPStoreIsNotTouchedByDiscovery(t *testing.T) {
	f := newHTTPFixture(t, nil, func(s store.Store) store.Store { return faultyStore{Store: s, panicReputation: true} })
	for _, p := range []string{"/.well-known/agent-card.json", "/llms.txt", "/openapi.json", "/docs", "/docs/init.js"} {
		if resp, body := f.do(t, http.MethodGet, p, nil, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s", p, resp.StatusCode, body)
		}
	}
}
