package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
)

// TestCheckLogInclusion: a receipt and its saved /log/proof verify with the
// card's log key; a tampered proof, a proof against another checkpoint, a
// wrong log key, another receipt or the full answer each fail with the
// check that names what is wrong.
func TestCheckLogInclusion(t *testing.T) {
	f := newLogFixture(t)
	get := func(path string) []byte {
		t.Helper()
		resp, body := f.do(t, http.MethodGet, path, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", path, resp.StatusCode, body)
		}
		return body
	}
	var ids []string
	var full []byte
	for i := range 3 {
		_, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"task_id": fmt.Sprint("t", i), "detail": "full"}))
		ids = append(ids, decodeObject(t, body)["verification_id"].(string))
		full = body
	}
	oldProof := get("/log/proof/" + ids[0]) // against the tree of 3
	_, _ = f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil))
	logKey := LogVerifierKey(get("/.well-known/agent-card.json"))
	if logKey == "" {
		t.Fatal("LogVerifierKey(card) is empty")
	}
	receipt, proofDoc := get("/receipts/"+ids[1]), get("/log/proof/"+ids[1])
	other, err := signing.OpenLogKey(filepath.Join(t.TempDir(), signing.LogKeyFile), LogOrigin(testPublicURL))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(set func(p *LogProof)) []byte {
		var p LogProof
		if err := json.Unmarshal(proofDoc, &p); err != nil {
			t.Fatal(err)
		}
		set(&p)
		b, _ := json.Marshal(p)
		return b
	}
	var old LogProof
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
		{"not a proof", receipt, []byte(`{"log_index":"x"}`), logKey, checkLogProof},
		{"proof hash not base64", receipt, edit(func(p *LogProof) { p.InclusionProof[0] = "!" }), logKey, checkLogProof},
		{"wrong log key", receipt, proofDoc, other.VerifierKey(), checkLogCheckpoint},
		{"malformed log key", receipt, proofDoc, "nope", checkLogCheckpoint},
		{"checkpoint edited", receipt, edit(func(p *LogProof) { p.Checkpoint = strings.Replace(p.Checkpoint, "\n4\n", "\n5\n", 1) }), logKey, checkLogCheckpoint},
		{"other checkpoint, its size", receipt, edit(func(p *LogProof) { p.Checkpoint, p.TreeSize = old.Checkpoint, old.TreeSize }), logKey, checkLogInclusion},
		{"other checkpoint", receipt, edit(func(p *LogProof) { p.Checkpoint = old.Checkpoint }), logKey, checkLogCheckpoint},
		{"another receipt", get("/receipts/" + ids[0]), proofDoc, logKey, checkLogEntry},
		{"the full answer", full, get("/log/proof/" + ids[2]), logKey, checkLogEntry},
		{"proof hash tampered", receipt, edit(func(p *LogProof) { p.InclusionProof[0] = p.Entry }), logKey, checkLogInclusion},
		{"index moved", receipt, edit(func(p *LogProof) { p.LogIndex = 0 }), logKey, checkLogInclusion},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checks, ok := CheckLogInclusion(tt.receipt, tt.proof, tt.key)
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
