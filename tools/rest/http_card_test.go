package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// a2aCardSchema compiles the official A2A 0.3 JSON Schema's AgentCard
// (testdata/a2a, vendored with its SOURCE) with the project's own engine.
func a2aCardSchema(t *testing.T) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testkit.SuitesDir, "a2a", "a2a-v0.3.0.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ijson.Decode(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": doc.(map[string]any)["definitions"],
		"$ref": "#/definitions/AgentCard"}
	s, err := schema.Compile(root, nil)
	if err != nil {
		t.Fatalf("compiling the A2A 0.3 schema: %v", err)
	}
	return s
}

// schemaFailures lists where instance fails s.
func schemaFailures(t *testing.T, s *schema.Schema, instance []byte) []string {
	t.Helper()
	v, err := ijson.Decode(instance, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Evaluate(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range res.Failures {
		out = append(out, f.Keyword+" at "+f.InstancePath+": "+f.Sentence())
	}
	return out
}

// TestAgentCardA2ASchema: the served card (at both well-known paths)
// validates against the official A2A 0.3 AgentCard schema; its A2A 1.0
// interfaces name their custom bindings by URI (A2A 1.0 §5.8) and agree
// with the 0.3 members (url and preferredTransport are the first
// interface, additionalInterfaces all of them); and it still reads back as
// a key source through the attestation extension. A card lacking one of
// the 0.3 members fails the schema, so the check can fail.
func TestAgentCardA2ASchema(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	s := a2aCardSchema(t)
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		resp, card := f.do(t, http.MethodGet, path, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d", path, resp.StatusCode)
		}
		for _, fl := range schemaFailures(t, s, card) {
			t.Errorf("%s fails the A2A 0.3 schema: %s", path, fl)
		}
	}

	_, raw := f.do(t, http.MethodGet, "/.well-known/agent-card.json", nil, nil)
	var c tools.AgentCard
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	want := []tools.AgentInterface{
		{URL: testPublicURL + "/mcp", ProtocolBinding: tools.BindingMCP, ProtocolVersion: "1.0"},
		{URL: testPublicURL, ProtocolBinding: tools.BindingREST, ProtocolVersion: "1.0"},
	}
	if len(c.SupportedInterfaces) != len(want) {
		t.Fatalf("supportedInterfaces = %+v, want %+v", c.SupportedInterfaces, want)
	}
	for i, in := range c.SupportedInterfaces {
		if in != want[i] {
			t.Errorf("supportedInterfaces[%d] = %+v, want %+v", i, in, want[i])
		}
		if u, err := url.Parse(in.ProtocolBinding); err != nil || u.Scheme == "" {
			t.Errorf("supportedInterfaces[%d].protocolBinding %q is not a URI", i, in.ProtocolBinding)
		}
		if i >= len(c.AdditionalInterfaces) || c.AdditionalInterfaces[i] != (tools.AgentInterfaceV03{URL: in.URL, Transport: in.ProtocolBinding}) {
			t.Errorf("additionalInterfaces = %+v, want supportedInterfaces in the 0.3 form", c.AdditionalInterfaces)
		}
	}
	if c.ProtocolVersion != "0.3.0" || c.URL != want[0].URL || c.PreferredTransport != want[0].ProtocolBinding {
		t.Errorf("protocolVersion %q, url %q, preferredTransport %q: want 0.3.0 and the first interface", c.ProtocolVersion, c.URL, c.PreferredTransport)
	}
	if keys, err := signing.KeysFromAgentCard(raw); err != nil || len(keys) == 0 {
		t.Errorf("the card no longer reads as a key source: %v, %v", keys, err)
	}

	// Each member A2A 0.3 requires, left out, fails the schema.
	for _, member := range []string{"url", "protocolVersion", "skills", "capabilities", "defaultInputModes"} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, member)
		without, _ := json.Marshal(m)
		fails := schemaFailures(t, s, without)
		if len(fails) == 0 || !strings.Contains(strings.Join(fails, "\n"), member) {
			t.Errorf("a card without %s passes the A2A 0.3 schema (%v)", member, fails)
		}
	}
}
