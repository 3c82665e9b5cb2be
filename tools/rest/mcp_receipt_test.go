package rest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

func TestMCPVerifyReceipt(t *testing.T) {
	svc := testkit.QuietService(t, true)
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(svc))
	passReq := string(testkit.ReadTestdata(t, "invoice-pass.json"))
	failReq := string(testkit.ReadTestdata(t, "invoice-fail.json"))
	pass := string(testkit.StructuredJSON(t, c.Call(t, contract.VerifySchema, passReq)))
	fail := string(testkit.StructuredJSON(t, c.Call(t, contract.VerifySchema, failReq)))
	record := string(testkit.StructuredJSON(t, c.Call(t, contract.Record, `{"agent_id":"seller-7"}`)))
	ownKey := svc.Keys.Current().PublicKey().PublicKey
	otherKeys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "other"), nil)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := otherKeys.Current().PublicKey().PublicKey
	// A receipt of another verifier without a public URL (stdio): it
	// carries its own key, which is not this verifier's.
	other := testkit.QuietService(t, false)
	foreign := string(testkit.StructuredJSON(t, testkit.ConnectMCP(t, mcpserver.NewMCPServer(other)).Call(t, contract.VerifySchema, passReq)))
	foreignKey := other.Keys.Current().PublicKey().PublicKey
	swapped := strings.Replace(foreign, foreignKey, otherKey, 1)
	if !strings.Contains(foreign, foreignKey) || swapped == foreign {
		t.Fatalf("the foreign receipt does not carry its key %s: %s", foreignKey, foreign)
	}
	tampered := strings.Replace(fail, `"result":"fail"`, `"result":"pass"`, 1)
	if tampered == fail {
		t.Fatal("could not tamper with the receipt")
	}
	tests := []struct {
		name, args     string
		valid          bool
		requestChecked bool
		keySource      string
		attested       any
		action         string
		failedCheck    string
	}{
		{"pass receipt", `{"receipt":` + pass + `}`, true, false, "server", "pass", "recheck_with_request", ""},
		{"pass receipt with its request", `{"receipt":` + pass + `,"request":` + passReq + `}`, true, true, "server", "pass", "proceed_to_payment", ""},
		{"fail receipt with its request", `{"receipt":` + fail + `,"request":` + failReq + `,"public_key":"` + ownKey + `"}`, true, true, "public_key", "fail", "withhold_payment", ""},
		{"request null", `{"receipt":` + pass + `,"request":null}`, true, false, "server", "pass", "recheck_with_request", ""},
		{"trust record", `{"receipt":` + record + `}`, true, false, "server", nil, "recheck_with_request", ""},
		{"tampered result", `{"receipt":` + tampered + `}`, false, false, "server", nil, "reject_receipt", signing.CheckSignature},
		{"another signer's key", `{"receipt":` + pass + `,"public_key":"` + otherKey + `"}`, false, false, "public_key", nil, "reject_receipt", signing.CheckKey},
		{"another verifier's receipt, its embedded key", `{"receipt":` + foreign + `,"request":` + passReq + `}`, true, true, "receipt", "pass", "proceed_to_payment", ""},
		{"embedded key swapped", `{"receipt":` + swapped + `}`, false, false, "receipt", nil, "reject_receipt", signing.CheckSignature},
		{"embedded key, its signer's key given", `{"receipt":` + foreign + `,"public_key":"` + foreignKey + `"}`, true, false, "public_key", "pass", "recheck_with_request", ""},
		{"request for another output", `{"receipt":` + pass + `,"request":` + failReq + `}`, false, true, "server", nil, "reject_receipt", "output_hash"},
		{"not a receipt", `{"receipt":{"result":"pass"}}`, false, false, "server", nil, "reject_receipt", signing.CheckAttestation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.VerifyReceipt, tt.args)
			if res.IsError {
				t.Fatalf("isError: %s", testkit.Text(res))
			}
			got := testkit.Structured(t, res)
			if got["valid"] != tt.valid || got["request_checked"] != tt.requestChecked || got["key_source"] != tt.keySource || got["attested_result"] != tt.attested {
				t.Errorf("report valid %v request_checked %v key_source %v attested_result %v, want %t %t %s %v\n%s",
					got["valid"], got["request_checked"], got["key_source"], got["attested_result"], tt.valid, tt.requestChecked, tt.keySource, tt.attested, testkit.Text(res))
			}
			if actions := got["next_actions"].([]any); actions[0].(map[string]any)["action"] != tt.action {
				t.Errorf("next_actions = %v, want %s first", actions, tt.action)
			}
			failed := map[string]bool{}
			for _, ch := range got["checks"].([]any) {
				ch := ch.(map[string]any)
				if ch["ok"] != true {
					failed[ch["name"].(string)] = true
				}
			}
			if tt.valid && len(failed) > 0 {
				t.Errorf("valid receipt has failed checks %v", failed)
			}
			if tt.failedCheck != "" && !failed[tt.failedCheck] {
				t.Errorf("failed checks = %v, want %s among them", failed, tt.failedCheck)
			}
			wantWord := "Receipt VALID"
			if !tt.valid {
				wantWord = "Receipt NOT valid"
			}
			if !strings.HasPrefix(testkit.Text(res), wantWord) {
				t.Errorf("text = %q, want it to start with %q", testkit.Text(res), wantWord)
			}
			if note := "The key came from the receipt itself"; strings.Contains(testkit.Text(res), note) != (tt.keySource == "receipt") {
				t.Errorf("text = %q: want %q exactly when key_source is receipt", testkit.Text(res), note)
			}
			for _, line := range strings.Split(testkit.Text(res), "\n") {
				isCheck := strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL ")
				if isCheck && (strings.HasSuffix(line, ":") || strings.TrimSpace(line) != line) {
					t.Errorf("check line %q has an empty detail", line)
				}
			}
		})
	}
}

func TestMCPVerifyReceiptInvalidArguments(t *testing.T) {
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, true)))
	receipt := string(testkit.StructuredJSON(t, c.Call(t, contract.VerifySchema, string(testkit.ReadTestdata(t, "invoice-pass.json")))))
	quoted, _ := json.Marshal(receipt)
	short := base64.StdEncoding.EncodeToString([]byte("short"))
	tests := []struct {
		name, args string
		fields     []string
	}{
		{"no arguments", ``, []string{"receipt"}},
		{"receipt as a JSON string", `{"receipt":` + string(quoted) + `}`, []string{"receipt"}},
		{"request not an object", `{"receipt":` + receipt + `,"request":[1]}`, []string{"request"}},
		{"public_key not base64", `{"receipt":` + receipt + `,"public_key":"not base64!"}`, []string{"public_key"}},
		{"public_key wrong length", `{"receipt":` + receipt + `,"public_key":"` + short + `"}`, []string{"public_key"}},
		{"public_key not a string", `{"receipt":` + receipt + `,"public_key":7}`, []string{"public_key"}},
		{"unknown argument", `{"receipt":` + receipt + `,"key":"x"}`, []string{"arguments"}},
		{"every problem at once", `{"receipt":1,"request":2,"public_key":3}`, []string{"receipt", "request", "public_key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.WantError(t, c.Call(t, contract.VerifyReceipt, tt.args), tools.CodeInvalidRequest, 422, tt.fields...)
		})
	}
}

// reordered re-encodes a JSON object as another client might: its members
// in reverse order, indented, every value's text kept.
func reordered(t testing.TB, raw []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(m))
	slices.Reverse(keys)
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",\n")
		}
		name, _ := json.Marshal(k)
		var v bytes.Buffer
		if err := json.Indent(&v, m[k], "  ", "  "); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %s: %s", name, v.Bytes())
	}
	b.WriteString("\n}")
	return b.Bytes()
}

// TestMCPVerifyReceiptLog: verify_receipt with log_proof reports the four
// inclusion checks beside the signature's, over the SDK's client: a logged
// compact receipt passes (re-encoded with its keys reordered too, and with
// the log key taken from log_key, the agent card or this server); a
// tampered entry, proof or checkpoint, a wrong log key or a changed
// receipt each fail at the named check and make the receipt not valid.
func TestMCPVerifyReceiptLog(t *testing.T) {
	f := newLogFixture(t)
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(f.svc))
	var ids []string
	for i := range 3 {
		res := c.Call(t, contract.VerifySchema, string(invoice(t, "invoice-pass.json", map[string]any{"task_id": fmt.Sprint("mcp-log-", i), "detail": "compact"})))
		ids = append(ids, testkit.Structured(t, res)["verification_id"].(string))
	}
	full := testkit.StructuredJSON(t, c.Call(t, contract.VerifySchema, string(invoice(t, "invoice-pass.json", map[string]any{"task_id": "mcp-log-full"}))))
	fullID := decodeObject(t, full)["verification_id"].(string)
	stored := f.get(t, "/receipts/"+ids[1])
	// The receipt as the MCP client got it: its structured content, re-encoded.
	asReceived := testkit.StructuredJSON(t, c.Call(t, contract.VerifySchema, string(invoice(t, "invoice-pass.json", map[string]any{"task_id": "mcp-log-received", "detail": "compact"}))))
	receivedID := decodeObject(t, asReceived)["verification_id"].(string)
	reencoded := reordered(t, stored)
	if bytes.Equal(bytes.ReplaceAll(bytes.ReplaceAll(reencoded, []byte("\n"), nil), []byte(" "), nil), stored) {
		t.Fatal("the re-encoded receipt has its members in the stored order")
	}
	card := f.get(t, "/.well-known/agent-card.json")
	proofDoc := f.get(t, "/log/proof/"+ids[1])
	var p tools.LogProof
	if err := json.Unmarshal(proofDoc, &p); err != nil {
		t.Fatal(err)
	}
	edit := func(set func(p *tools.LogProof)) string {
		q := p
		q.InclusionProof = slices.Clone(p.InclusionProof)
		set(&q)
		b, _ := json.Marshal(q)
		return string(b)
	}
	other, err := signing.OpenLogKey(filepath.Join(t.TempDir(), signing.LogKeyFile), LogOrigin(testPublicURL))
	if err != nil {
		t.Fatal(err)
	}
	forgedCheckpoint, err := other.Checkpoint(p.TreeSize, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	// A well-formed log key whose name is long: the report quotes it cut short.
	_, longNameKey, err := note.GenerateKey(nil, strings.Repeat("n", 5000))
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(stored, []byte(`"result":"pass"`), []byte(`"result":"fail"`), 1)
	if bytes.Equal(changed, stored) {
		t.Fatal("could not change the receipt")
	}
	proof := string(proofDoc)
	for _, tt := range []struct {
		name, args string
		wantFail   []string // the failed checks; none when valid
	}{
		{"stored receipt", `{"receipt":` + string(stored) + `,"log_proof":` + proof + `}`, nil},
		{"keys reordered, indented", `{"receipt":` + string(reencoded) + `,"log_proof":` + proof + `}`, nil},
		{"as the client received it", `{"receipt":` + string(asReceived) + `,"log_proof":` + string(f.get(t, "/log/proof/"+receivedID)) + `}`, nil},
		{"log key given", `{"receipt":` + string(stored) + `,"log_proof":` + proof + `,"log_key":"` + f.svc.LogKey.VerifierKey() + `"}`, nil},
		{"log key of the agent card", `{"receipt":` + string(stored) + `,"agent_card":` + string(card) + `,"log_proof":` + proof + `}`, nil},
		{"entry tampered", `{"receipt":` + string(stored) + `,"log_proof":` + edit(func(q *tools.LogProof) { q.Entry = q.InclusionProof[0] }) + `}`, []string{tools.LogCheckEntry}},
		{"proof hash tampered", `{"receipt":` + string(stored) + `,"log_proof":` + edit(func(q *tools.LogProof) { q.InclusionProof[0] = q.Entry }) + `}`, []string{tools.LogCheckInclusion}},
		{"checkpoint tampered", `{"receipt":` + string(stored) + `,"log_proof":` + edit(func(q *tools.LogProof) { q.Checkpoint = strings.Replace(q.Checkpoint, "\n5\n", "\n6\n", 1) }) + `}`, []string{tools.LogCheckCheckpoint}},
		{"checkpoint of another log key", `{"receipt":` + string(stored) + `,"log_proof":` + edit(func(q *tools.LogProof) { q.Checkpoint = string(forgedCheckpoint) }) + `}`, []string{tools.LogCheckCheckpoint}},
		{"wrong log key", `{"receipt":` + string(stored) + `,"log_proof":` + proof + `,"log_key":"` + other.VerifierKey() + `"}`, []string{tools.LogCheckCheckpoint}},
		{"log key of a long name", `{"receipt":` + string(stored) + `,"log_proof":` + proof + `,"log_key":"` + longNameKey + `"}`, []string{tools.LogCheckCheckpoint}},
		{"another receipt's proof", `{"receipt":` + string(stored) + `,"log_proof":` + string(f.get(t, "/log/proof/"+ids[0])) + `}`, []string{tools.LogCheckEntry}},
		{"receipt changed", `{"receipt":` + string(changed) + `,"log_proof":` + proof + `}`, []string{signing.CheckSignature, tools.LogCheckEntry}},
		// The default full answer: its stored compact form, which the log
		// holds, is read from the store and matched member for member.
		{"the full answer", `{"receipt":` + string(full) + `,"log_proof":` + string(f.get(t, "/log/proof/"+fullID)) + `}`, nil},
		{"the full answer, another verification's proof", `{"receipt":` + string(full) + `,"log_proof":` + proof + `}`, []string{tools.LogCheckEntry}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.VerifyReceipt, tt.args)
			if res.IsError {
				t.Fatalf("isError: %s", testkit.Text(res))
			}
			got := testkit.Structured(t, res)
			var failed, logChecks []string
			for _, ch := range got["checks"].([]any) {
				ch := ch.(map[string]any)
				name := ch["name"].(string)
				if strings.HasPrefix(name, "log_") {
					logChecks = append(logChecks, name)
				}
				if ch["ok"] != true {
					failed = append(failed, name)
				}
				if detail, _ := ch["detail"].(string); len(detail) > 300 {
					t.Errorf("check %s has a detail of %d bytes: what was sent is quoted at length", name, len(detail))
				}
			}
			if valid := len(tt.wantFail) == 0; got["valid"] != valid || got["log_checked"] != true || !slices.Equal(failed, tt.wantFail) {
				t.Errorf("valid %v log_checked %v failed checks %v, want %t true %v\n%s", got["valid"], got["log_checked"], failed, valid, tt.wantFail, testkit.Text(res))
			}
			if len(tt.wantFail) == 0 && !slices.Equal(logChecks, []string{tools.LogCheckProof, tools.LogCheckCheckpoint, tools.LogCheckEntry, tools.LogCheckInclusion}) {
				t.Errorf("log checks = %v, want the four in order", logChecks)
			}
			if len(tt.wantFail) > 0 && (got["attested_result"] != nil || !strings.HasPrefix(testkit.Text(res), "Receipt NOT valid")) {
				t.Errorf("attested_result %v, text %q: want none and NOT valid", got["attested_result"], testkit.Text(res))
			}
		})
	}
	// Without log_proof, no log check runs.
	got := testkit.Structured(t, c.Call(t, contract.VerifyReceipt, `{"receipt":`+string(stored)+`}`))
	if _, ok := got["log_checked"]; ok || got["valid"] != true {
		t.Errorf("without log_proof: %v, want valid and no log_checked", got)
	}
}

// TestMCPVerifyReceiptLogArguments: malformed log_proof and log_key get
// the error shape naming the field, never quoting what was sent; a
// verifier serving no log asks for log_key.
func TestMCPVerifyReceiptLogArguments(t *testing.T) {
	f := newLogFixture(t)
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(f.svc))
	res := c.Call(t, contract.VerifySchema, string(invoice(t, "invoice-pass.json", map[string]any{"detail": "compact"})))
	receipt := string(testkit.StructuredJSON(t, res))
	id := testkit.Structured(t, res)["verification_id"].(string)
	_, proofDoc := f.do(t, http.MethodGet, "/log/proof/"+id, nil, nil)
	with := func(set func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(proofDoc, &m); err != nil {
			t.Fatal(err)
		}
		set(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	const marker = "MARKER-never-echoed"
	quoted, _ := json.Marshal(string(proofDoc))
	tests := []struct {
		name, args string
		field      string
	}{
		{"log_proof as a JSON string", `{"receipt":` + receipt + `,"log_proof":` + string(quoted) + `}`, "log_proof"},
		{"log_proof an array", `{"receipt":` + receipt + `,"log_proof":["` + marker + `"]}`, "log_proof"},
		{"member missing", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { delete(m, "checkpoint") }) + `}`, "log_proof.checkpoint"},
		{"unknown member", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { m[marker] = marker }) + `}`, "log_proof"},
		{"log_index a string", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { m["log_index"] = marker }) + `}`, "log_proof.log_index"},
		{"log_index negative", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { m["log_index"] = -1 }) + `}`, "log_proof.log_index"},
		{"log_index beyond the tree", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { m["log_index"] = 7 }) + `}`, "log_proof.tree_size"},
		{"proof hash not base64", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { m["inclusion_proof"] = []any{marker} }) + `}`, "log_proof.inclusion_proof[0]"},
		{"entry null", `{"receipt":` + receipt + `,"log_proof":` + with(func(m map[string]any) { m["entry"] = nil }) + `}`, "log_proof.entry"},
		{"log_key not a key", `{"receipt":` + receipt + `,"log_proof":` + string(proofDoc) + `,"log_key":"` + marker + `"}`, "log_key"},
		{"log_key a number", `{"receipt":` + receipt + `,"log_proof":` + string(proofDoc) + `,"log_key":7}`, "log_key"},
		{"log_key without log_proof", `{"receipt":` + receipt + `,"log_key":"` + f.svc.LogKey.VerifierKey() + `"}`, "log_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.VerifyReceipt, tt.args)
			testkit.WantError(t, res, tools.CodeInvalidRequest, 422, tt.field)
			if body := string(testkit.StructuredJSON(t, res)); strings.Contains(body, marker) || strings.Contains(testkit.Text(res), marker) {
				t.Errorf("the error quotes what was sent: %s", body)
			}
		})
	}

	// A verifier that serves no log: log_key is required, and enough.
	plain := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, true)))
	testkit.WantError(t, plain.Call(t, contract.VerifyReceipt, `{"receipt":`+receipt+`,"public_key":"`+f.svc.Keys.Current().PublicKey().PublicKey+`","log_proof":`+string(proofDoc)+`}`),
		tools.CodeInvalidRequest, 422, "log_key")
	got := testkit.Structured(t, plain.Call(t, contract.VerifyReceipt, `{"receipt":`+receipt+`,"public_key":"`+f.svc.Keys.Current().PublicKey().PublicKey+`","log_proof":`+string(proofDoc)+`,"log_key":"`+f.svc.LogKey.VerifierKey()+`"}`))
	if got["valid"] != true || got["log_checked"] != true {
		t.Errorf("with log_key on a verifier without a log: %v, want valid", got)
	}
}

// TestMCPVerifyReceiptRecordedKeys: verify_receipt without a key checks a
// receipt of another replica of the same store — signed by a key this
// process's key store lacks, recorded in the store — and the card
// publishes that key, within a few seconds of its recording.
func TestMCPVerifyReceiptRecordedKeys(t *testing.T) {
	here := testkit.QuietService(t, true)
	here.PublicURL = testPublicURL // receipts name the card, not their key
	otherKeys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "other"), &signing.KeyStoreOptions{
		EnvSeed: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{42}, signing.SeedSize))})
	if err != nil {
		t.Fatal(err)
	}
	replica := &tools.Service{Engine: here.Engine, Keys: otherKeys, Store: here.Store, Version: "test", PublicURL: testPublicURL}
	kr, ok := store.KeyRecordsOf(here.Store)
	if !ok {
		t.Fatal("the test store keeps no key records")
	}
	signer := otherKeys.Current()
	pub, _ := otherKeys.Lookup(signer.KeyVersion())
	if err := kr.AddSigningKey(context.Background(), store.KeyRecord{KeyVersion: signer.KeyVersion(), PublicKey: pub}); err != nil {
		t.Fatal(err)
	}
	receipt := string(testkit.StructuredJSON(t, testkit.ConnectMCP(t, mcpserver.NewMCPServer(replica)).Call(t, contract.VerifySchema,
		string(testkit.ReadTestdata(t, "invoice-pass.json")))))
	got := testkit.Structured(t, testkit.ConnectMCP(t, mcpserver.NewMCPServer(here)).Call(t, contract.VerifyReceipt, `{"receipt":`+receipt+`}`))
	if got["valid"] != true || got["key_source"] != "server" {
		t.Errorf("verify_receipt of the other replica's receipt = valid %v, key_source %v; want valid from the server's keys:\n%v", got["valid"], got["key_source"], got)
	}
	published := here.PublishedKeys(context.Background())
	if !slices.ContainsFunc(published, func(k signing.PublicKey) bool { return k.KeyVersion == signer.KeyVersion() }) {
		t.Errorf("PublishedKeys() = %v, want the recorded key %s among them", published, signer.KeyVersion())
	}
}
