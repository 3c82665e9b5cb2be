package tools

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
)

func TestMCPVerifyReceipt(t *testing.T) {
	svc := quietService(t, true)
	c := connectMCP(t, svc)
	passReq := string(readTestdata(t, "invoice-pass.json"))
	failReq := string(readTestdata(t, "invoice-fail.json"))
	pass := string(structuredJSON(t, c.call(t, ToolVerifySchema, passReq)))
	fail := string(structuredJSON(t, c.call(t, ToolVerifySchema, failReq)))
	record := string(structuredJSON(t, c.call(t, ToolRecord, `{"agent_id":"seller-7"}`)))
	ownKey := svc.Keys.Current().PublicKey().PublicKey
	otherKeys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "other"), nil)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := otherKeys.Current().PublicKey().PublicKey
	// A receipt of another verifier without a public URL (stdio): it
	// carries its own key, which is not this verifier's.
	other := quietService(t, false)
	foreign := string(structuredJSON(t, connectMCP(t, other).call(t, ToolVerifySchema, passReq)))
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
			res := c.call(t, ToolVerifyReceipt, tt.args)
			if res.IsError {
				t.Fatalf("isError: %s", text(res))
			}
			got := structured(t, res)
			if got["valid"] != tt.valid || got["request_checked"] != tt.requestChecked || got["key_source"] != tt.keySource || got["attested_result"] != tt.attested {
				t.Errorf("report valid %v request_checked %v key_source %v attested_result %v, want %t %t %s %v\n%s",
					got["valid"], got["request_checked"], got["key_source"], got["attested_result"], tt.valid, tt.requestChecked, tt.keySource, tt.attested, text(res))
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
			if !strings.HasPrefix(text(res), wantWord) {
				t.Errorf("text = %q, want it to start with %q", text(res), wantWord)
			}
			if note := "The key came from the receipt itself"; strings.Contains(text(res), note) != (tt.keySource == "receipt") {
				t.Errorf("text = %q: want %q exactly when key_source is receipt", text(res), note)
			}
			for _, line := range strings.Split(text(res), "\n") {
				isCheck := strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL ")
				if isCheck && (strings.HasSuffix(line, ":") || strings.TrimSpace(line) != line) {
					t.Errorf("check line %q has an empty detail", line)
				}
			}
		})
	}
}

func TestMCPVerifyReceiptInvalidArguments(t *testing.T) {
	c := connectMCP(t, quietService(t, true))
	receipt := string(structuredJSON(t, c.call(t, ToolVerifySchema, string(readTestdata(t, "invoice-pass.json")))))
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
			wantError(t, c.call(t, ToolVerifyReceipt, tt.args), CodeInvalidRequest, 422, tt.fields...)
		})
	}
}
