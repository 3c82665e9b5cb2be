package rest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// newLogFixture is an HTTP fixture whose service serves the transparency
// log of its bbolt store (seen through Instrumented, as the server runs it).
func newLogFixture(t *testing.T) *httpFixture {
	t.Helper()
	dir := t.TempDir()
	keys, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(dir, "verifier.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logKey, err := signing.OpenLogKey(filepath.Join(dir, signing.LogKeyFile), LogOrigin(testPublicURL))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	svc := &tools.Service{
		Engine: engine.New(nil), Keys: keys, Store: store.Instrumented(st, "bbolt", nopStoreOps{}), Version: "test",
		PublicURL: testPublicURL, Log: slog.New(slog.NewTextHandler(logs, nil)),
	}
	opts := &HTTPOptions{}
	WithLog(svc, opts, logKey)
	h, err := NewHTTPHandler(svc, withMCP(svc, opts))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &httpFixture{svc: svc, h: h, srv: srv, logs: logs}
}

// nopStoreOps observes nothing.
type nopStoreOps struct{}

func (nopStoreOps) ObserveStoreOp(string, string, time.Duration, bool) {}

// httpTiles is a tlog.TileReader over GET /log/tile/….
type httpTiles struct {
	t *testing.T
	f *httpFixture
}

func (httpTiles) Height() int { return store.TileHeight }

func (r httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		path := "/log/tile/" + strings.TrimPrefix(tile.Path(), "tile/8/") // C2SP: no height
		resp, body := r.f.do(r.t, http.MethodGet, path, nil, nil)
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		wantCache := cacheImmutable
		if tile.W < 256 {
			wantCache = cacheCheckpoint
		}
		if got := resp.Header.Get("Cache-Control"); got != wantCache {
			r.t.Errorf("GET %s Cache-Control = %q, want %q", path, got, wantCache)
		}
		out[i] = body
	}
	return out, nil
}

func (httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// TestHTTPTransparencyLog: after verifications over REST, the card
// publishes the log key; /log/checkpoint verifies with it
// (note.NewVerifier) and names as many entries as verdicts; the tiles
// rebuild its root (tlog.TileHashReader checks each); the entry bundle
// holds the SHA-256 of each stored receipt's RFC 8785 form; /log/proof's inclusion proof
// verifies with transparency-dev/merkle against the checkpoint's root.
func TestHTTPTransparencyLog(t *testing.T) {
	f := newLogFixture(t)
	const n = 3
	var ids []string
	for i := range n {
		_, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"agent_id": "seller-7", "task_id": fmt.Sprint("t", i)}))
		ids = append(ids, decodeObject(t, body)["verification_id"].(string))
	}

	_, cardBody := f.do(t, http.MethodGet, "/.well-known/agent-card.json", nil, nil)
	var card tools.AgentCard
	if err := json.Unmarshal(cardBody, &card); err != nil {
		t.Fatal(err)
	}
	tl := card.Capabilities.Extensions[0].Params.TransparencyLog
	if tl == nil || tl.Origin != "127.0.0.1:8080/log" && tl.Origin != LogOrigin(testPublicURL) || tl.URL != testPublicURL+"/log" {
		t.Fatalf("card transparencyLog = %+v", tl)
	}
	verifier, err := note.NewVerifier(tl.VerifierKey)
	if err != nil {
		t.Fatalf("note.NewVerifier(card key %q) error = %v", tl.VerifierKey, err)
	}

	resp, cp := f.do(t, http.MethodGet, "/log/checkpoint", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != cacheCheckpoint {
		t.Fatalf("GET /log/checkpoint = %d, Cache-Control %q: %s", resp.StatusCode, resp.Header.Get("Cache-Control"), cp)
	}
	signed, err := note.Open(cp, note.VerifierList(verifier))
	if err != nil {
		t.Fatalf("note.Open(checkpoint) error = %v\n%s", err, cp)
	}
	lines := strings.Split(signed.Text, "\n")
	if len(lines) != 4 || lines[0] != tl.Origin || lines[1] != strconv.Itoa(n) || lines[3] != "" {
		t.Fatalf("checkpoint body = %q, want origin, %d, root", signed.Text, n)
	}
	rootBytes, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(rootBytes) != 32 {
		t.Fatalf("checkpoint root %q: %v", lines[2], err)
	}
	var root tlog.Hash
	copy(root[:], rootBytes)

	thr := tlog.TileHashReader(tlog.Tree{N: n, Hash: root}, httpTiles{t, f})
	if got, err := tlog.TreeHash(n, thr); err != nil || got != root {
		t.Fatalf("root from the served tiles = %v, %v; want %v", got, err, root)
	}

	_, c2sp := f.do(t, http.MethodGet, "/log/tile/0/000.p/"+strconv.Itoa(n), nil, nil)
	resp, goForm := f.do(t, http.MethodGet, "/log/tile/8/0/000.p/"+strconv.Itoa(n), nil, nil)
	if resp.StatusCode != http.StatusOK || string(goForm) != string(c2sp) || len(c2sp) != n*32 {
		t.Errorf("GET /log/tile/8/0/000.p/%d = %d, %d bytes; want the C2SP path's %d bytes", n, resp.StatusCode, len(goForm), len(c2sp))
	}
	resp, bundle := f.do(t, http.MethodGet, "/log/tile/entries/000.p/"+strconv.Itoa(n), nil, nil)
	if resp.StatusCode != http.StatusOK || len(bundle) != n*34 {
		t.Fatalf("GET entries = %d, %d bytes", resp.StatusCode, len(bundle))
	}
	for i, id := range ids {
		resp, receipt := f.do(t, http.MethodGet, "/receipts/"+id, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /receipts/%s = %d", id, resp.StatusCode)
		}
		// The receipt names its place in the log in headers, its body unchanged.
		link := resp.Header.Get("Link")
		proofPath, ok := strings.CutSuffix(strings.TrimPrefix(link, "<"), `>; rel="log-proof"`)
		if resp.Header.Get(LogIndexHeader) != strconv.Itoa(i) || !ok || proofPath != "/log/proof/"+id {
			t.Fatalf("GET /receipts/%s: %s %q, Link %q; want index %d and the proof's route", id, LogIndexHeader, resp.Header.Get(LogIndexHeader), link, i)
		}
		resp, body := f.do(t, http.MethodGet, proofPath, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /log/proof/%s = %d: %s", id, resp.StatusCode, body)
		}
		var p tools.LogProof
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		canonical, err := jcs.Transform(receipt)
		if err != nil {
			t.Fatalf("receipt %s is not I-JSON: %v", id, err)
		}
		entry := sha256.Sum256(canonical)
		if p.LogIndex != int64(i) || p.Entry != base64.StdEncoding.EncodeToString(entry[:]) || p.TreeSize != n {
			t.Fatalf("proof of %s = %+v, want index %d, entry SHA-256(JCS(receipt))", id, p, i)
		}
		if string(bundle[i*34+2:(i+1)*34]) != string(entry[:]) {
			t.Errorf("entry bundle record %d is not SHA-256(JCS(receipt)) of %s", i, id)
		}
		pn, err := note.Open([]byte(p.Checkpoint), note.VerifierList(verifier))
		if err != nil || pn.Text != signed.Text {
			t.Fatalf("proof checkpoint = %q, %v; want the verified checkpoint %q", p.Checkpoint, err, signed.Text)
		}
		path := make([][]byte, len(p.InclusionProof))
		for j, h := range p.InclusionProof {
			if path[j], err = base64.StdEncoding.DecodeString(h); err != nil {
				t.Fatal(err)
			}
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(p.LogIndex), uint64(p.TreeSize),
			rfc6962.DefaultHasher.HashLeaf(entry[:]), path, root[:]); err != nil {
			t.Errorf("merkle proof.VerifyInclusion(%s) error = %v", id, err)
		}
	}

	for _, path := range []string{"/log/tile/0/001", "/log/tile/1/000", "/log/tile/entries/000", "/log/tile/0/000.p/4",
		"/log/tile/junk", "/log/tile/4/0/000", "/log/tile/0/x/1", "/log/proof/never", "/log/tile/entries/../x"} {
		resp, body := f.do(t, http.MethodGet, path, nil, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"not_found"`) {
			t.Errorf("GET %s = %d %s, want 404 not_found", path, resp.StatusCode, body)
		}
	}
	if _, err := f.svc.Store.Receipt(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	_, doc := openAPIDoc(t, f)
	ops := strings.Join(documentedOps(doc), "\n")
	for _, op := range []string{"get /log/checkpoint", "get /log/tile/{path}", "get /log/proof/{verification_id}"} {
		if !strings.Contains(ops, op) {
			t.Errorf("/openapi.json does not document %s:\n%s", op, ops)
		}
	}
}

// TestVerifyAnswersCarryLogIndex: a REST verify answer carries its log
// index in the Log-Index header and an MCP verify_schema result in
// _meta["verifier/log-index"], each equal to /log/proof's log_index; a
// service without a served log sets neither.
func TestVerifyAnswersCarryLogIndex(t *testing.T) {
	f := newLogFixture(t)
	proofIndex := func(id string) string {
		t.Helper()
		resp, body := f.do(t, http.MethodGet, "/log/proof/"+id, nil, nil)
		var p tools.LogProof
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &p) != nil {
			t.Fatalf("GET /log/proof/%s = %d: %s", id, resp.StatusCode, body)
		}
		return strconv.FormatInt(p.LogIndex, 10)
	}
	for i := range 2 {
		resp, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"task_id": fmt.Sprint("rest", i)}))
		id, _ := decodeObject(t, body)["verification_id"].(string)
		if got, want := resp.Header.Get(LogIndexHeader), proofIndex(id); resp.StatusCode != http.StatusOK || got != want || got != strconv.Itoa(i) {
			t.Errorf("REST verify %d: status %d, %s %q, want %q (/log/proof)", i, resp.StatusCode, LogIndexHeader, got, want)
		}
	}
	r := callTool(t, f.srv.URL+"/mcp", contract.VerifySchema, invoice(t, "invoice-pass.json", map[string]any{"task_id": "mcp"}))
	var ans struct {
		VerificationID string `json:"verification_id"`
	}
	testkit.DecodeStructured(t, r, &ans)
	got, ok := r.Meta[mcpserver.MetaLogIndex].(float64)
	if r.IsError || !ok || strconv.FormatFloat(got, 'f', -1, 64) != proofIndex(ans.VerificationID) || got != 2 {
		t.Errorf("MCP verify_schema _meta = %v (isError %v), want %s = /log/proof's log_index 2", r.Meta, r.IsError, mcpserver.MetaLogIndex)
	}

	plain := newHTTPFixture(t, nil, nil)
	resp, _ := plain.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil))
	if resp.StatusCode != http.StatusOK || resp.Header.Get(LogIndexHeader) != "" {
		t.Errorf("verify without a log: status %d, %s %q, want none", resp.StatusCode, LogIndexHeader, resp.Header.Get(LogIndexHeader))
	}
}

// TestPaidVerifyCarriesLogIndex: a paid REST verify answer carries the
// Log-Index of its verdict, stored with the settlement, equal to
// /log/proof's log_index.
func TestPaidVerifyCarriesLogIndex(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	svc := testkit.NewTestService(t, true)
	g, err := payment.NewGate(payment.Config{FreePerDay: -1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet}, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := signing.OpenLogKey(filepath.Join(t.TempDir(), signing.LogKeyFile), LogOrigin(testPublicURL))
	if err != nil {
		t.Fatal(err)
	}
	var opts HTTPOptions
	WithPayment(svc, &opts, g)
	WithLog(svc, &opts, logKey)
	h, err := NewHTTPHandler(svc, withMCP(svc, &opts))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")
	unpaid := do(t, "POST", ts.URL+"/verify/schema", invoice, "")
	if unpaid.status != http.StatusPaymentRequired || unpaid.header.Get(LogIndexHeader) != "" {
		t.Fatalf("unpaid = %d, %s %q; want 402 without it", unpaid.status, LogIndexHeader, unpaid.header.Get(LogIndexHeader))
	}
	paid := do(t, "POST", ts.URL+"/verify/schema", invoice, payFor(t, unpaid))
	id, _ := paid.body["verification_id"].(string)
	proof := do(t, "GET", ts.URL+"/log/proof/"+id, nil, "")
	want := fmt.Sprint(proof.body["log_index"])
	if paid.status != http.StatusOK || proof.status != http.StatusOK || paid.header.Get(LogIndexHeader) != want || want != "0" {
		t.Errorf("paid = %d, %s %q; /log/proof = %d log_index %s", paid.status, LogIndexHeader, paid.header.Get(LogIndexHeader), proof.status, want)
	}
}
