package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestCheckLogInclusion: a receipt and its saved /log/proof verify with the
// card's log key; a tampered proof, a proof against another checkpoint, a
// wrong log key, another receipt or the full answer each fail with the
// check that names what is wrong.
func TestCheckLogInclusion(t *testing.T) {
	f := newLogFixture(t)
	var ids []string
	var full []byte
	for i := range 3 {
		_, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"task_id": fmt.Sprint("t", i), "detail": "full"}))
		ids = append(ids, decodeObject(t, body)["verification_id"].(string))
		full = body
	}
	oldProof := f.get(t, "/log/proof/"+ids[0]) // against the tree of 3
	_, _ = f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil))
	logKey := tools.LogVerifierKey(f.get(t, "/.well-known/agent-card.json"))
	if logKey == "" {
		t.Fatal("LogVerifierKey(card) is empty")
	}
	receipt, proofDoc := f.get(t, "/receipts/"+ids[1]), f.get(t, "/log/proof/"+ids[1])
	other, err := signing.OpenLogKey(filepath.Join(t.TempDir(), signing.LogKeyFile), LogOrigin(testPublicURL))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(set func(p *tools.LogProof)) []byte {
		var p tools.LogProof
		if err := json.Unmarshal(proofDoc, &p); err != nil {
			t.Fatal(err)
		}
		set(&p)
		b, _ := json.Marshal(p)
		return b
	}
	var old tools.LogProof
	if err := json.Unmarshal(oldProof, &old); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		receipt  []byte
		proof    []byte
		key      string
		wantFail string // "" when every check holds
	}{
		{"valid", receipt, proofDoc, logKey, ""},
		{"not a proof", receipt, []byte(`{"log_index":"x"}`), logKey, tools.LogCheckProof},
		{"proof hash not base64", receipt, edit(func(p *tools.LogProof) { p.InclusionProof[0] = "!" }), logKey, tools.LogCheckProof},
		{"wrong log key", receipt, proofDoc, other.VerifierKey(), tools.LogCheckCheckpoint},
		{"malformed log key", receipt, proofDoc, "nope", tools.LogCheckCheckpoint},
		{"checkpoint edited", receipt, edit(func(p *tools.LogProof) { p.Checkpoint = strings.Replace(p.Checkpoint, "\n4\n", "\n5\n", 1) }), logKey, tools.LogCheckCheckpoint},
		{"other checkpoint, its size", receipt, edit(func(p *tools.LogProof) { p.Checkpoint, p.TreeSize = old.Checkpoint, old.TreeSize }), logKey, tools.LogCheckInclusion},
		{"other checkpoint", receipt, edit(func(p *tools.LogProof) { p.Checkpoint = old.Checkpoint }), logKey, tools.LogCheckCheckpoint},
		{"another receipt", f.get(t, "/receipts/"+ids[0]), proofDoc, logKey, tools.LogCheckEntry},
		{"the full answer", full, f.get(t, "/log/proof/"+ids[2]), logKey, tools.LogCheckEntry},
		{"proof hash tampered", receipt, edit(func(p *tools.LogProof) { p.InclusionProof[0] = p.Entry }), logKey, tools.LogCheckInclusion},
		{"index moved", receipt, edit(func(p *tools.LogProof) { p.LogIndex = 0 }), logKey, tools.LogCheckInclusion},
		// A second log_index after the true one: json.Unmarshal would take the last.
		{"duplicate member", receipt, slices.Concat(bytes.TrimSuffix(proofDoc, []byte("}")), []byte(`,"log_index":0}`)), logKey, tools.LogCheckProof},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checks, ok := tools.CheckLogInclusion(tt.receipt, tt.proof, tt.key)
			last := checks[len(checks)-1]
			if tt.wantFail == "" {
				if !ok || len(checks) != 4 || !last.OK {
					t.Errorf("CheckLogInclusion = %v, %+v; want 4 checks held", ok, checks)
				}
				return
			}
			if ok || last.OK || last.Name != tt.wantFail || last.Detail == "" {
				t.Errorf("CheckLogInclusion = %v, %+v; want the last check %s failed with a detail", ok, checks, tt.wantFail)
			}
		})
	}
}

// logVectorFile holds transparency log inclusion cases that the browser
// test of /check (e2e/browser/pages.test.mjs) runs through logcheck.js:
// written by TestLogInclusionVector with -update, and checked with
// CheckLogInclusion on every run, so the page's JS and the Go check agree.
const logVectorFile = "testdata/log-inclusion-vector.json"

// logVectorCase is one case: a receipt (text, as a client re-encoded it),
// a GET /log/proof answer, the log's verifier key, and the check that
// fails ("" when all four hold).
type logVectorCase struct {
	Name        string          `json:"name"`
	Receipt     string          `json:"receipt"`
	Proof       json.RawMessage `json:"proof"`
	VerifierKey string          `json:"verifier_key"`
	WantFail    string          `json:"want_fail"`
	// Stored is the service's stored compact receipt of the verification
	// (GET /receipts/{verification_id}), for a full answer's case; "" for
	// none.
	Stored string `json:"stored,omitempty"`
}

// makeLogVector logs seven receipts and writes the cases of logVectorFile.
func makeLogVector(t *testing.T) []logVectorCase {
	f := newLogFixture(t)
	var ids []string
	var answers [][]byte // the full answers as sent
	for i := range 7 {
		_, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"task_id": fmt.Sprint("vector-", i)}))
		ids = append(ids, decodeObject(t, body)["verification_id"].(string))
		answers = append(answers, body)
	}
	key := f.svc.LogKey.VerifierKey()
	other, err := signing.OpenLogKey(filepath.Join(t.TempDir(), signing.LogKeyFile), LogOrigin(testPublicURL))
	if err != nil {
		t.Fatal(err)
	}
	receipt := func(i int) string { return string(reordered(t, f.get(t, "/receipts/"+ids[i]))) }
	full := string(reordered(t, answers[5]))
	var withMember map[string]any
	if err := json.Unmarshal(answers[5], &withMember); err != nil {
		t.Fatal(err)
	}
	withMember["note"] = "a member no answer has"
	fullPlus, _ := json.Marshal(withMember)
	proof := func(i int, set func(p *tools.LogProof)) json.RawMessage {
		var p tools.LogProof
		if err := json.Unmarshal(f.get(t, "/log/proof/"+ids[i]), &p); err != nil {
			t.Fatal(err)
		}
		set(&p)
		b, _ := json.MarshalIndent(p, "", "  ")
		return b
	}
	same := func(*tools.LogProof) {}
	forged, err := other.Checkpoint(7, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	return []logVectorCase{
		{"record 5 of 7", receipt(5), proof(5, same), key, "", ""},
		{"record 6 of 7, the right edge", receipt(6), proof(6, same), key, "", ""},
		{"record 0 of 7", receipt(0), proof(0, same), key, "", ""},
		{"not a proof", receipt(5), json.RawMessage(`{"log_index":"x"}`), key, tools.LogCheckProof, ""},
		{"proof hash not base64", receipt(5), proof(5, func(p *tools.LogProof) { p.InclusionProof[0] = "!" }), key, tools.LogCheckProof, ""},
		{"malformed log key", receipt(5), proof(5, same), "not a key", tools.LogCheckCheckpoint, ""},
		{"another log key", receipt(5), proof(5, same), other.VerifierKey(), tools.LogCheckCheckpoint, ""},
		{"checkpoint edited", receipt(5), proof(5, func(p *tools.LogProof) { p.Checkpoint = strings.Replace(p.Checkpoint, "\n7\n", "\n8\n", 1) }), key, tools.LogCheckCheckpoint, ""},
		{"checkpoint of another key", receipt(5), proof(5, func(p *tools.LogProof) { p.Checkpoint = string(forged) }), key, tools.LogCheckCheckpoint, ""},
		{"entry tampered", receipt(5), proof(5, func(p *tools.LogProof) { p.Entry = p.InclusionProof[0] }), key, tools.LogCheckEntry, ""},
		{"receipt changed", strings.Replace(receipt(5), `"vector-5"`, `"vector-X"`, 1), proof(5, same), key, tools.LogCheckEntry, ""},
		{"another receipt's proof", receipt(4), proof(5, func(p *tools.LogProof) { p.VerificationID = ids[4] }), key, tools.LogCheckEntry, ""},
		{"proof hash tampered", receipt(5), proof(5, func(p *tools.LogProof) { p.InclusionProof[0] = p.Entry }), key, tools.LogCheckInclusion, ""},
		{"index moved", receipt(5), proof(5, func(p *tools.LogProof) { p.LogIndex = 4 }), key, tools.LogCheckInclusion, ""},
		{"a hash short", receipt(5), proof(5, func(p *tools.LogProof) { p.InclusionProof = p.InclusionProof[1:] }), key, tools.LogCheckInclusion, ""},
		// The full answer: the log holds its stored compact form, which
		// stands for it when it is exactly the answer without its
		// full-only members (tools.IsLoggedFormOf).
		{"the full answer, with its stored receipt", full, proof(5, same), key, "", receipt(5)},
		{"the full answer, no stored receipt", full, proof(5, same), key, tools.LogCheckEntry, ""},
		{"the full answer with a member added", string(fullPlus), proof(5, same), key, tools.LogCheckEntry, receipt(5)},
		{"the full answer, another verification's stored receipt", full, proof(5, same), key, tools.LogCheckEntry, receipt(4)},
	}
}

// TestLogInclusionVector: every case of logVectorFile gets, from
// CheckLogInclusion, the outcome it records (refresh with -update).
func TestLogInclusionVector(t *testing.T) {
	if testkit.Update() {
		cases := makeLogVector(t)
		b, err := json.MarshalIndent(cases, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(logVectorFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(logVectorFile)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	var cases []logVectorCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", logVectorFile, err)
	}
	if len(cases) < 10 {
		t.Fatalf("%s has %d cases", logVectorFile, len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var stored []byte
			if c.Stored != "" {
				stored = []byte(c.Stored)
			}
			checks, ok := tools.CheckLogInclusionStored([]byte(c.Receipt), stored, c.Proof, c.VerifierKey)
			last := checks[len(checks)-1]
			switch {
			case c.WantFail == "" && (!ok || len(checks) != 4):
				t.Errorf("CheckLogInclusion = %v, %+v; want the four checks held", ok, checks)
			case c.WantFail != "" && (ok || last.OK || last.Name != c.WantFail):
				t.Errorf("CheckLogInclusion = %v, %+v; want %s failed last", ok, checks, c.WantFail)
			}
		})
	}
}
