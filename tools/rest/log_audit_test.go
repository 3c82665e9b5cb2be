package rest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
)

// auditClock is a service clock that moves seven hours per reading, so
// the verdicts of an audit test weigh differently in the score.
type auditClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *auditClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(7 * time.Hour)
	return c.at
}

// addVerdicts verifies n requests over REST, passing and failing, for the
// agents seller-7, seller-8, a test- agent and none, in turn.
func addVerdicts(t *testing.T, f *httpFixture, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		file := "invoice-pass.json"
		if i%5 == 3 {
			file = "invoice-fail.json"
		}
		set := map[string]any{"task_id": fmt.Sprint("audit-", i)}
		if agent := []string{"seller-7", "seller-8", "test-bot", ""}[i%4]; agent != "" {
			set["agent_id"] = agent
		}
		resp, body := f.postJSON(t, "/verify/schema", invoice(t, file, set))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("verification %d: %d %s", i, resp.StatusCode, body)
		}
	}
}

// auditProxy serves f's handler, passing each answer's body through alter
// (nil: unchanged): a dishonest operator or a man in the middle.
func auditProxy(t *testing.T, f *httpFixture, alter func(path string, body []byte) []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if alter != nil && rec.Code == http.StatusOK {
			body = alter(r.URL.Path, bytes.Clone(body))
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// onPath applies edit to the body of path only.
func onPath(path string, edit func([]byte) []byte) func(string, []byte) []byte {
	return func(p string, body []byte) []byte {
		if p != path {
			return body
		}
		return edit(body)
	}
}

// editReceipts edits the first receipts bundle's array of receipts.
func editReceipts(t *testing.T, edit func([]json.RawMessage) []json.RawMessage) func(string, []byte) []byte {
	return onPath("/log/receipts/000", func(body []byte) []byte {
		var rs []json.RawMessage
		if err := json.Unmarshal(body, &rs); err != nil {
			t.Errorf("receipts bundle: %v", err)
			return body
		}
		out, _ := json.Marshal(edit(rs))
		return out
	})
}

// resignRecord edits a signed trust record and signs it again with the
// service's key, as a dishonest operator could.
func resignRecord(t *testing.T, f *httpFixture, edit func(*tools.TrustRecord)) func(string, []byte) []byte {
	return onPath("/score/seller-7", func(body []byte) []byte {
		var rec tools.TrustRecord
		if err := json.Unmarshal(body, &rec); err != nil {
			t.Errorf("record: %v", err)
			return body
		}
		edit(&rec)
		out, err := ijson.Marshal(rec)
		if err != nil {
			t.Error(err)
			return body
		}
		signed, err := f.svc.Keys.Current().Sign(signing.ContextTrustScore, out, rec.VerifiedAt)
		if err != nil {
			t.Error(err)
			return body
		}
		return signed
	})
}

// flipByte changes one byte of a document.
func flipByte(at int) func([]byte) []byte {
	return func(b []byte) []byte {
		if at < len(b) {
			b[at] ^= 0x01
		}
		return b
	}
}

// checkAudit runs an audit and checks that it ends at the check failing
// ("" for a clean pass), and that every check before it held.
func checkAudit(t *testing.T, opts tools.AuditOptions, failing string) *tools.AuditReport {
	t.Helper()
	report := tools.AuditLog(context.Background(), opts)
	var lines []string
	for _, c := range report.Checks {
		lines = append(lines, fmt.Sprintf("%v %s %s", c.OK, c.Name, c.Detail))
	}
	last := report.Checks[len(report.Checks)-1]
	switch {
	case failing == "" && !report.OK:
		t.Fatalf("audit failed, want it to pass:\n%s", strings.Join(lines, "\n"))
	case failing != "" && (report.OK || last.OK || last.Name != failing):
		t.Fatalf("audit ended OK=%v, want it to fail at %s:\n%s", report.OK, failing, strings.Join(lines, "\n"))
	}
	for _, c := range report.Checks[:len(report.Checks)-1] {
		if !c.OK {
			t.Errorf("check %s failed before the last: %s", c.Name, c.Detail)
		}
	}
	return report
}

// previous returns state as the last audited checkpoint.
func previous(state *tools.AuditState) func(string) (*tools.AuditState, error) {
	return func(string) (*tools.AuditState, error) { return state, nil }
}

// TestLogAudit: against a real Service with 258 verdicts (a full and a
// partial bundle), a clean audit with --agent passes every check; each
// tampering of a proxy in front of it — a changed entry, tile or receipt,
// a hidden or swapped verdict, a checkpoint signed by another key, a
// forked checkpoint, a truncated log, a rewritten history, a record whose
// numbers, checkpoint or recent verdicts do not match the log — fails
// the audit at its named check; after more verdicts, a second audit
// passes consistency against the first one's state.
func TestLogAudit(t *testing.T) {
	f := newLogFixture(t)
	clock := &auditClock{at: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)}
	f.svc.Now = clock.now
	addVerdicts(t, f, 0, 258)
	ctx := context.Background()

	clean := checkAudit(t, tools.AuditOptions{BaseURL: f.srv.URL, AgentID: "seller-7"}, "")
	for _, name := range []string{tools.CheckAuditCard, tools.CheckAuditRecord, tools.CheckAuditCheckpoint, tools.CheckAuditConsistency, tools.CheckAuditTiles,
		tools.CheckAuditEntries, tools.CheckAuditReceipts, tools.CheckAuditRecordLog, tools.CheckAuditRecordScore, tools.CheckAuditRecordRecent} {
		if !hasCheck(clean.Checks, name) {
			t.Errorf("clean audit has no %s check", name)
		}
	}
	state1 := clean.State
	if state1 == nil || state1.TreeSize != 258 || state1.Origin != f.svc.LogKey.Name() {
		t.Fatalf("clean audit state = %+v, want the checkpoint of 258 records of %s", state1, f.svc.LogKey.Name())
	}
	// Every agent, the ones without history too, audits clean.
	for _, agent := range []string{"seller-8", "test-bot", "nobody"} {
		checkAudit(t, tools.AuditOptions{BaseURL: f.srv.URL, AgentID: agent}, "")
	}

	otherKey, err := signing.OpenLogKey(t.TempDir()+"/other.key", f.svc.LogKey.Name())
	if err != nil {
		t.Fatal(err)
	}
	var otherRoot [32]byte
	otherRoot[0] = 1
	forked, err := f.svc.LogKey.Checkpoint(state1.TreeSize, otherRoot)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := otherKey.Checkpoint(state1.TreeSize, otherRoot)
	if err != nil {
		t.Fatal(err)
	}
	serve := func(doc []byte) func([]byte) []byte { return func([]byte) []byte { return doc } }

	for _, c := range []struct {
		name    string
		alter   func(string, []byte) []byte
		prev    *tools.AuditState
		failing string
	}{
		{"changed entry", onPath("/log/tile/entries/000", flipByte(2+34*5+7)), nil, tools.CheckAuditEntries},
		{"changed partial entry bundle", onPath("/log/tile/entries/001.p/2", flipByte(2+34+3)), nil, tools.CheckAuditEntries},
		{"changed tile", onPath("/log/tile/0/000", flipByte(32*9)), nil, tools.CheckAuditTiles},
		{"changed receipt", editReceipts(t, func(rs []json.RawMessage) []json.RawMessage {
			rs[3] = bytes.Replace(rs[3], []byte(`"result":"fail"`), []byte(`"result":"pass"`), 1)
			return rs
		}), nil, tools.CheckAuditReceipts},
		{"hidden verdict", editReceipts(t, func(rs []json.RawMessage) []json.RawMessage {
			return append(rs[:7:7], rs[8:]...)
		}), nil, tools.CheckAuditReceipts},
		{"swapped verdicts", editReceipts(t, func(rs []json.RawMessage) []json.RawMessage {
			rs[4], rs[5] = rs[5], rs[4]
			return rs
		}), nil, tools.CheckAuditReceipts},
		{"checkpoint of another key", onPath("/log/checkpoint", serve(foreign)), nil, tools.CheckAuditCheckpoint},
		{"forked checkpoint", onPath("/log/checkpoint", serve(forked)), state1, tools.CheckAuditFork},
		{"record re-signed with another score", resignRecord(t, f, func(r *tools.TrustRecord) { r.Score += 0.5 }), nil, tools.CheckAuditRecordScore},
		{"record without a failure", resignRecord(t, f, func(r *tools.TrustRecord) { r.Inputs.Failed--; r.Inputs.Total-- }), nil, tools.CheckAuditRecordScore},
		{"record from another tree", resignRecord(t, f, func(r *tools.TrustRecord) {
			r.Log.RootHash = base64.StdEncoding.EncodeToString(otherRoot[:])
		}), nil, tools.CheckAuditRecordLog},
		{"record with an unlogged recent verdict", resignRecord(t, f, func(r *tools.TrustRecord) {
			r.RecentVerdicts[0].VerificationID = "00000000-0000-4000-8000-000000000000"
		}), nil, tools.CheckAuditRecordRecent},
		{"record changed after signing", onPath("/score/seller-7", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"total":`), []byte(`"total":1`), 1)
		}), nil, tools.CheckAuditRecord},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := auditProxy(t, f, c.alter)
			report := checkAudit(t, tools.AuditOptions{BaseURL: srv.URL, AgentID: "seller-7", Previous: previous(c.prev)}, c.failing)
			if report.OK {
				t.Errorf("tampered audit reported OK")
			}
		})
	}

	// More verdicts: the next audit proves the first tree a prefix.
	addVerdicts(t, f, 258, 5)
	second := checkAudit(t, tools.AuditOptions{BaseURL: f.srv.URL, AgentID: "seller-7", Previous: previous(state1)}, "")
	for _, name := range []string{tools.CheckAuditTruncation, tools.CheckAuditFork, tools.CheckAuditConsistency} {
		if c, ok := findCheck(second.Checks, name); !ok || !c.OK {
			t.Errorf("second audit's %s check = %+v, want it passed", name, c)
		}
	}
	state2 := second.State
	if state2.TreeSize != 263 {
		t.Fatalf("second audit state has %d records, want 263", state2.TreeSize)
	}
	// The log served as it was at the first audit: truncated.
	t.Run("truncated log", func(t *testing.T) {
		srv := auditProxy(t, f, onPath("/log/checkpoint", serve([]byte(state1.Checkpoint))))
		checkAudit(t, tools.AuditOptions{BaseURL: srv.URL, Previous: previous(state2)}, tools.CheckAuditTruncation)
	})
	// The first audit saw another history of 258 records: the tiles do not
	// prove it a prefix.
	t.Run("rewritten history", func(t *testing.T) {
		seen := *state1
		seen.RootHash = base64.StdEncoding.EncodeToString(otherRoot[:])
		checkAudit(t, tools.AuditOptions{BaseURL: f.srv.URL, Previous: previous(&seen)}, tools.CheckAuditConsistency)
	})
	t.Run("state of another log", func(t *testing.T) {
		other := *state2
		other.Origin = "elsewhere.example/log"
		checkAudit(t, tools.AuditOptions{BaseURL: f.srv.URL, Previous: previous(&other)}, tools.CheckAuditConsistency)
	})
	t.Run("log larger than allowed", func(t *testing.T) {
		checkAudit(t, tools.AuditOptions{BaseURL: f.srv.URL, MaxRecords: 100}, tools.CheckAuditCheckpoint)
	})
	_ = ctx
}

// TestLogAuditHostileServer: a server answering with oversized or
// malformed documents fails the audit at the check reading them, without
// reading more than the bounds.
func TestLogAuditHostileServer(t *testing.T) {
	f := newLogFixture(t)
	addVerdicts(t, f, 0, 3)
	huge := bytes.Repeat([]byte("x"), tools.MaxAuditReceipts+10)
	for _, c := range []struct {
		name    string
		alter   func(string, []byte) []byte
		failing string
	}{
		{"huge card", onPath("/.well-known/agent-card.json", func([]byte) []byte { return huge[:tools.MaxAuditCard+1] }), tools.CheckAuditCard},
		{"huge checkpoint", onPath("/log/checkpoint", func([]byte) []byte { return huge[:tools.MaxAuditCheckpoint+1] }), tools.CheckAuditCheckpoint},
		{"huge receipts", onPath("/log/receipts/000.p/3", func([]byte) []byte { return huge }), tools.CheckAuditReceipts},
		{"receipts not JSON", onPath("/log/receipts/000.p/3", func([]byte) []byte { return []byte("[{") }), tools.CheckAuditReceipts},
		{"short entry bundle", onPath("/log/tile/entries/000.p/3", func(b []byte) []byte { return b[:len(b)-1] }), tools.CheckAuditEntries},
		{"long entry bundle", onPath("/log/tile/entries/000.p/3", func(b []byte) []byte { return append(b, 0, 1, 9) }), tools.CheckAuditEntries},
		{"record not signed", onPath("/score/seller-7", func([]byte) []byte { return []byte(`{"agent_id":"seller-7"}`) }), tools.CheckAuditRecord},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkAudit(t, tools.AuditOptions{BaseURL: auditProxy(t, f, c.alter).URL, AgentID: "seller-7"}, c.failing)
		})
	}
}

// TestTrustRecordNamesItsCheckpoint: with the log served, a record names
// the checkpoint it was computed from; without, it has no "log" member.
func TestTrustRecordNamesItsCheckpoint(t *testing.T) {
	f := newLogFixture(t)
	addVerdicts(t, f, 0, 6)
	_, body := f.do(t, http.MethodGet, "/score/seller-7", nil, nil)
	var rec tools.TrustRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		t.Fatal(err)
	}
	tree, err := mustLog(t, f).LogTree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := tools.RecordLog{Origin: f.svc.LogKey.Name(), TreeSize: 6, RootHash: base64.StdEncoding.EncodeToString(tree.Hash[:])}
	if rec.Log == nil || *rec.Log != want {
		t.Errorf("record log = %+v, want %+v", rec.Log, want)
	}
	raw, _ := openAPIDoc(t, f)
	newSchemaValidator(t, raw).checkJSON(t, "a record naming its checkpoint", "TrustRecord", body)

	plain := newHTTPFixture(t, nil, nil)
	addVerdicts(t, plain, 0, 2)
	_, body = plain.do(t, http.MethodGet, "/score/seller-7", nil, nil)
	if bytes.Contains(body, []byte(`"log"`)) {
		t.Errorf("a record of a service without a log names one: %s", body)
	}
}

// TestHTTPLogReceipts: /log/receipts/<N>[.p/<W>] serves the stored
// receipts of the records in log order, each hashing to its entry in the
// entry bundle at the same path; full bundles are immutable; bundles
// beyond the tree and malformed paths are 404s.
func TestHTTPLogReceipts(t *testing.T) {
	f := newLogFixture(t)
	addVerdicts(t, f, 0, 258)
	for _, c := range []struct {
		path  string
		width int
		cache string
	}{{"000", 256, cacheImmutable}, {"001.p/2", 2, cacheCheckpoint}, {"000.p/5", 5, cacheCheckpoint}} {
		resp, body := f.do(t, http.MethodGet, "/log/receipts/"+c.path, nil, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != c.cache || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /log/receipts/%s: %d, %q, %q", c.path, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("Content-Type"))
		}
		var rs []json.RawMessage
		if err := json.Unmarshal(body, &rs); err != nil || len(rs) != c.width {
			t.Fatalf("GET /log/receipts/%s: %d receipts, %v; want %d", c.path, len(rs), err, c.width)
		}
		_, entries := f.do(t, http.MethodGet, "/log/tile/entries/"+c.path, nil, nil)
		for i, r := range rs {
			e, err := store.LogEntry(r)
			if err != nil || !bytes.Equal(entries[i*34+2:i*34+34], e[:]) {
				t.Fatalf("GET /log/receipts/%s: receipt %d does not hash to its entry", c.path, i)
			}
			if report, err := signing.VerifyReceipt(r, f.svc.Keys); err != nil || !report.Valid {
				t.Fatalf("GET /log/receipts/%s: receipt %d does not verify: %v", c.path, i, err)
			}
		}
	}
	for _, path := range []string{"001", "001.p/3", "002.p/1", "x", "000.p/0", "000.p/257", "-1", "000/extra"} {
		resp, body := f.do(t, http.MethodGet, "/log/receipts/"+path, nil, nil)
		if resp.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte(`"not_found"`)) {
			t.Errorf("GET /log/receipts/%s: %d %s, want the 404 error", path, resp.StatusCode, body)
		}
	}
}

// mustLog is the log of f's store.
func mustLog(t *testing.T, f *httpFixture) store.Log {
	t.Helper()
	l, ok := store.LogOf(f.svc.Store)
	if !ok {
		t.Fatal("the fixture's store keeps no log")
	}
	return l
}

func hasCheck(checks []signing.Check, name string) bool {
	_, ok := findCheck(checks, name)
	return ok
}

func findCheck(checks []signing.Check, name string) (signing.Check, bool) {
	for _, c := range checks {
		if c.Name == name {
			return c, true
		}
	}
	return signing.Check{}, false
}
