package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
)

// inRepoVectors is the repository's copy of the published request-hash
// vectors (testdata/request-hash/SOURCE).
var inRepoVectors = filepath.Join("..", "testdata", "request-hash")

// TestNullMeansNotSet holds SPEC §1: null is "not set" for every optional
// member, and a request written with nulls decodes and hashes as one that
// leaves them out.
func TestNullMeansNotSet(t *testing.T) {
	tests := []struct {
		name         string
		withNulls    string
		withoutNulls string
	}{
		{
			name:         "request fields",
			withNulls:    `{"task_id":"t","agent_id":null,"expected_schema":{},"submitted_output":1,"bounds":null,"rules":null,"enforce_rules":null,"strict_content_check":null,"detail":null}`,
			withoutNulls: `{"task_id":"t","expected_schema":{},"submitted_output":1}`,
		},
		{
			name:         "sum_equals with every other member null",
			withNulls:    `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals_field":"b","equals":null,"other_field":null,"value":null,"in_field":null,"values":null,"tolerance":null,"if_present":null}]}`,
			withoutNulls: `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals_field":"b"}]}`,
		},
		{
			name:         "gte with value and the rest null",
			withNulls:    `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"gte","field":"a","value":0,"other_field":null,"equals":null,"equals_field":null,"in_field":null,"values":null}]}`,
			withoutNulls: `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"gte","field":"a","value":0}]}`,
		},
		{
			name:         "exists_in with in_field",
			withNulls:    `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"exists_in","field":"a","in_field":"b","values":null}]}`,
			withoutNulls: `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"exists_in","field":"a","in_field":"b"}]}`,
		},
		{
			name:         "unique",
			withNulls:    `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a","equals":null,"value":null,"values":null,"in_field":null,"other_field":null,"equals_field":null}]}`,
			withoutNulls: `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a"}]}`,
		},
		{
			name:         "bound members",
			withNulls:    `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"min":null,"max":5,"if_present":null}}}`,
			withoutNulls: `{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":{"a":{"max":5}}}`,
		},
	}
	v := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withNulls, err := v.DecodeRequest([]byte(tt.withNulls))
			if err != nil {
				t.Fatalf("DecodeRequest(with nulls) = %v, want it accepted", err)
			}
			without, err := v.DecodeRequest([]byte(tt.withoutNulls))
			if err != nil {
				t.Fatal(err)
			}
			a, err := freshHashes(withNulls)
			if err != nil {
				t.Fatal(err)
			}
			b, err := freshHashes(without)
			if err != nil {
				t.Fatal(err)
			}
			if a.Request != b.Request {
				t.Errorf("request_hash with nulls %s, without %s: want equal", a.Request, b.Request)
			}
			if withNulls.Detail != DetailFull || withNulls.EnforceRules || withNulls.StrictContentCheck {
				t.Errorf("null flags did not take their defaults: %+v", withNulls)
			}
			for i, r := range withNulls.Rules {
				if r.Tolerance != DefaultTolerance || r.IfPresent {
					t.Errorf("rules[%d]: null tolerance/if_present did not take the defaults: %+v", i, r)
				}
			}
		})
	}
}

// TestMemberOfAnotherRuleTypeWithAValue: a member that does not apply to
// the rule's type is accepted when null and refused with a value.
func TestMemberOfAnotherRuleTypeWithAValue(t *testing.T) {
	body := `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a","equals":0}]}`
	_, err := New(nil).DecodeRequest([]byte(body))
	var inv *InvalidRequestError
	if !errors.As(err, &inv) || !strings.Contains(strings.Join(inv.FieldNames(), " "), "rules[0].equals") {
		t.Errorf("DecodeRequest = %v, want rules[0].equals refused", err)
	}
	both := `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals":1,"equals_field":null}]}`
	if _, err := New(nil).DecodeRequest([]byte(both)); err != nil {
		t.Errorf("equals with equals_field null = %v, want accepted", err)
	}
	neither := `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals":null,"equals_field":null}]}`
	if _, err := New(nil).DecodeRequest([]byte(neither)); !errors.As(err, &inv) {
		t.Errorf("sum_equals with both targets null = %v, want refused (needs one)", err)
	}
}

// TestCanonicalFormsAreRequests: the canonical form of each request-hash
// vector, sent as a request, is accepted and has the vector's request_hash.
func TestCanonicalFormsAreRequests(t *testing.T) {
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(inRepoVectors, name+".canonical.json"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(inRepoVectors, name+".sha256"))
			if err != nil {
				t.Fatal(err)
			}
			req, err := New(nil).DecodeRequest(bytes.TrimSpace(body))
			if err != nil {
				t.Fatalf("DecodeRequest(%s.canonical.json) = %v", name, err)
			}
			h, err := freshHashes(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Request; got != strings.TrimSpace(string(want)) {
				t.Errorf("request_hash = %s, want %s", got, want)
			}
		})
	}
}

// TestRulesHashOfCanonicalFormIsAsSent: rules_hash covers bounds and rules
// exactly as sent (SPEC §5, as the hosted service's pipeline hashes
// req.get("bounds") and req.get("rules")): a request written with null
// members hashes them, null members included.
func TestRulesHashOfCanonicalFormIsAsSent(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(inRepoVectors, "tv-2.canonical.json"))
	if err != nil {
		t.Fatal(err)
	}
	var parts struct{ Bounds, Rules json.RawMessage }
	if err := json.Unmarshal(body, &parts); err != nil {
		t.Fatal(err)
	}
	doc, err := signing.Canonicalize([]byte(`{"bounds":` + string(parts.Bounds) + `,"rules":` + string(parts.Rules) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := New(nil).DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	h, err := freshHashes(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := signing.HashCanonical(doc); h.Rules != want {
		t.Errorf("rules_hash = %s, want %s (bounds and rules as sent)", h.Rules, want)
	}
}
