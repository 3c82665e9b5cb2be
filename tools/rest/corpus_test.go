package rest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// corpusHandler is the HTTP mode on a real key store and a bbolt store
// without fsync (thousands of verdicts are stored), logs discarded.
func corpusHandler(t testing.TB) (*HTTPHandler, *tools.Service) {
	t.Helper()
	keys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Store: st, Version: "test",
		PublicURL: testPublicURL, Log: slog.New(slog.DiscardHandler)}
	h, err := NewHTTPHandler(svc, withMCP(svc, nil))
	if err != nil {
		t.Fatal(err)
	}
	return h, svc
}

// suiteFile is one JSONTestSuite test_parsing file: y_ must be accepted by
// a JSON parser, n_ rejected, i_ either.
type suiteFile struct {
	name string
	data []byte
}

func (f suiteFile) kind() byte { return f.name[0] }

func jsonTestSuite(t testing.TB) []suiteFile {
	t.Helper()
	dir := filepath.Join(testkit.SuitesDir, "jsontestsuite", "test_parsing")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the JSONTestSuite: %v", err)
	}
	var files []suiteFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, suiteFile{e.Name(), b})
	}
	if len(files) < 300 {
		t.Fatalf("found %d JSONTestSuite files, want the whole suite (318)", len(files))
	}
	return files
}

// embedded is a verification request with data as its submitted_output,
// byte for byte.
func embedded(data []byte) []byte {
	return append(append([]byte(`{"task_id":"jsontestsuite","expected_schema":true,"submitted_output":`), data...), '}')
}

// TestJSONTestSuiteREST sends every JSONTestSuite file to POST
// /verify/schema as the raw body and embedded as submitted_output: n_ files
// get 422 both ways; y_ files get a verdict when embedded (or a 422 for an
// I-JSON violation: duplicate keys, lone surrogates, numbers out of range)
// and a 422 as the raw body (which is not a request); i_ files get either.
// Never a 5xx, and no error quotes the file.
func TestJSONTestSuiteREST(t *testing.T) {
	h, _ := corpusHandler(t)
	counts := map[string]int{}
	var refusedY []string
	for _, f := range jsonTestSuite(t) {
		t.Run(f.name, func(t *testing.T) {
			raw := testkit.ServeRaw(h, http.MethodPost, "/verify/schema", "application/json", f.data)
			o := testkit.Classify(t, raw.Code, raw.Header(), raw.Body.Bytes(), false, string(f.data))
			if o.Status != http.StatusUnprocessableEntity {
				t.Errorf("raw body: status %d, want 422 (not a verification request): %.300s", o.Status, o.Body)
			}
			emb := testkit.ServeRaw(h, http.MethodPost, "/verify/schema", "application/json", embedded(f.data))
			o = testkit.Classify(t, emb.Code, emb.Header(), emb.Body.Bytes(), false, string(f.data))
			switch {
			case f.kind() == 'n' && o.Status != http.StatusUnprocessableEntity:
				t.Errorf("embedded n_ file: status %d, want 422: %.300s", o.Status, o.Body)
			case o.Status != http.StatusOK && o.Status != http.StatusUnprocessableEntity:
				t.Errorf("embedded: status %d, want a verdict or 422: %.300s", o.Status, o.Body)
			}
			counts[string(f.kind())+strconv.Itoa(o.Status)]++
			if f.kind() == 'y' && o.Status != http.StatusOK {
				refusedY = append(refusedY, f.name)
			}
		})
	}
	t.Logf("embedded answers by file kind and status: %v; y_ files refused (I-JSON): %v", counts, refusedY)
	if counts["y200"] < 80 {
		t.Errorf("only %d y_ files got a verdict embedded; the I-JSON profile should refuse only a few", counts["y200"])
	}
}

// TestJSONTestSuiteMCP sends every JSONTestSuite file embedded as
// submitted_output in a verify_schema call over stdio (its newlines, which
// the stdio framing reserves, replaced by oneLine). A frame that is not JSON gets a
// JSON-RPC parse error; a readable one a verdict or an invalid_request
// error result; the session answers the next call every time.
func TestJSONTestSuiteMCP(t *testing.T) {
	s := testkit.StartStdioSession(t, mcpserver.ServeStdio, testkit.QuietService(t, true))
	counts := map[string]int{}
	var unreadableI []string
	for _, f := range jsonTestSuite(t) {
		t.Run(f.name, func(t *testing.T) {
			data := oneLine(f.data)
			s.NextID++
			frame := `{"jsonrpc":"2.0","id":` + strconv.Itoa(s.NextID) + `,"method":"tools/call","params":{"name":"verify_schema","arguments":` +
				string(embedded([]byte(data))) + `}}`
			s.Write(t, []byte(frame))
			m := s.Next(t)
			result, code, rpcCode := testkit.ToolAnswer(t, m)
			switch {
			case rpcCode != 0:
				if rpcCode != jsonrpc.CodeParseError && rpcCode != jsonrpc.CodeInvalidRequest {
					t.Errorf("JSON-RPC error %v, want a parse error or invalid request: %v", rpcCode, m)
				}
				if f.kind() == 'y' {
					t.Errorf("y_ file refused as a frame: %v", m)
				}
				counts[string(f.kind())+"-rpc"]++
				if f.kind() == 'i' {
					unreadableI = append(unreadableI, f.name)
				}
			case code != "":
				if code != tools.CodeInvalidRequest {
					t.Errorf("error result %q, want %q: %v", code, tools.CodeInvalidRequest, m)
				}
				counts[string(f.kind())+"-422"]++
			default:
				if f.kind() == 'n' {
					t.Errorf("n_ file got a verdict (%s): %v", result, m)
				}
				counts[string(f.kind())+"-verdict"]++
			}
			if b, _ := json.Marshal(m); code != "" && testkit.Echoes(b, data) {
				t.Errorf("the error result quotes the file: %.300s", b)
			}
			s.Alive(t)
		})
	}
	t.Logf("answers by file kind: %v; i_ files refused as frames: %v", counts, unreadableI)
}

// oneLine makes a JSON text fit stdio's newline-delimited framing without
// changing whether it is valid: a newline or carriage return between
// tokens becomes a space, one inside a string (never valid there) a
// control character (never valid there either).
func oneLine(data []byte) string {
	out := make([]byte, len(data))
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case c == '\n' || c == '\r':
			if inString {
				c = 0x01
			} else {
				c = ' '
			}
			escaped = false
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		out[i] = c
	}
	return string(out)
}

// plainName is what an error may name of a key the caller sent: a plain
// identifier, the field path of SPEC §6.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_.$\[\]"-]{1,100}$`)

// naughtyStrings reads the Big List of Naughty Strings.
func naughtyStrings(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.SuitesDir, "naughty-strings", "blns.json"))
	if err != nil {
		t.Fatalf("reading the naughty strings: %v", err)
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) < 500 {
		t.Fatalf("found %d naughty strings, want the whole list (515)", len(list))
	}
	return list
}

// plantings put a string s in every string field of a request, as raw JSON
// (q is s quoted). key is true where s lands as an object key, which an
// error may name when it is a plain identifier.
var plantings = []struct {
	field string
	key   bool
	body  func(q string) string
}{
	{"task_id", false, func(q string) string {
		return `{"task_id":` + q + `,"expected_schema":true,"submitted_output":1}`
	}},
	{"agent_id", false, func(q string) string {
		return `{"task_id":"t","agent_id":` + q + `,"expected_schema":true,"submitted_output":1}`
	}},
	{"detail", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":1,"detail":` + q + `}`
	}},
	{"output key", true, func(q string) string {
		return `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":{` + q + `:1},"strict_content_check":true}`
	}},
	{"output value", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"type":"object","properties":{"a":{"type":"integer"}}},"submitted_output":{"a":` + q + `},"strict_content_check":true}`
	}},
	{"top-level key", true, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":1,` + q + `:1}`
	}},
	{"rule type", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":` + q + `,"field":"a[]"}]}`
	}},
	{"rule field", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":"unique","field":` + q + `}]}`
	}},
	{"rule equals_field", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":"sum_equals","field":"a[]","equals_field":` + q + `}]}`
	}},
	{"rule other_field", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":"gte","field":"a[]","other_field":` + q + `}],"enforce_rules":true}`
	}},
	{"rule in_field", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":"exists_in","field":"a[]","in_field":` + q + `}]}`
	}},
	{"rule values", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":["x"]},"rules":[{"type":"exists_in","field":"a[]","values":[` + q + `]}]}`
	}},
	{"rule key", true, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":"unique","field":"a[]",` + q + `:1}]}`
	}},
	{"bound key", true, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":1},"bounds":{` + q + `:{"min":0}}}`
	}},
	{"bound min", false, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":"2026-01-01"},"bounds":{"a":{"min":` + q + `}}}`
	}},
	{"bound field", true, func(q string) string {
		return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":1},"bounds":{"a":{"min":0,` + q + `:1}}}`
	}},
	{"schema pattern", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"pattern":` + q + `},"submitted_output":"x"}`
	}},
	{"schema patternProperties", true, func(q string) string {
		return `{"task_id":"t","expected_schema":{"patternProperties":{` + q + `:{"type":"null"}}},"submitted_output":{"x":1}}`
	}},
	{"schema property name", true, func(q string) string {
		return `{"task_id":"t","expected_schema":{"properties":{` + q + `:{"type":"string"}},"required":[` + q + `]},"submitted_output":{}}`
	}},
	{"schema format", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"format":` + q + `},"submitted_output":"x"}`
	}},
	{"schema $ref", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"$ref":` + q + `},"submitted_output":1}`
	}},
	{"schema $id", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"$id":` + q + `,"type":"integer"},"submitted_output":1}`
	}},
	{"schema const", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"const":` + q + `},"submitted_output":"x"}`
	}},
	{"schema $schema", false, func(q string) string {
		return `{"task_id":"t","expected_schema":{"$schema":` + q + `},"submitted_output":1}`
	}},
}

// TestNaughtyStringsREST plants every naughty string in every string field
// of a request sent to POST /verify/schema: each gets a verdict or a 422 in
// the one error shape, never a 5xx, and no error quotes the string (an
// object key may be named when it is a plain identifier, as a field path).
func TestNaughtyStringsREST(t *testing.T) {
	h, _ := corpusHandler(t)
	list := naughtyStrings(t)
	for _, p := range plantings {
		t.Run(p.field, func(t *testing.T) {
			statuses := map[int]int{}
			for i, s := range list {
				q, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				rec := testkit.ServeRaw(h, http.MethodPost, "/verify/schema", "application/json", []byte(p.body(string(q))))
				var planted []string
				if !(p.key && plainName.MatchString(s)) {
					planted = []string{s}
				}
				o := testkit.Classify(t, rec.Code, rec.Header(), rec.Body.Bytes(), false, planted...)
				statuses[o.Status]++
				if o.Status != http.StatusOK && o.Status != http.StatusUnprocessableEntity {
					t.Errorf("string #%d: status %d, want a verdict or 422", i, o.Status)
				}
				if t.Failed() {
					t.Fatalf("stopping at string #%d %q", i, s)
				}
			}
			t.Logf("%s: statuses %v", p.field, statuses)
		})
	}
}

// TestNaughtyStringsMCP sends every naughty string in the string fields of
// verify_schema's arguments over the in-memory MCP transport: a verdict or
// an invalid_request error result that does not quote it.
func TestNaughtyStringsMCP(t *testing.T) {
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, false)))
	list := naughtyStrings(t)
	outSchema := testkit.ResolveSchema(t, c.Tools[contract.VerifySchema].OutputSchema) // once: resolving costs more than a call
	for _, p := range plantings {
		if strings.HasPrefix(p.field, "schema ") && p.field != "schema pattern" {
			continue // the REST test covers the schema keywords; MCP passes arguments on byte for byte
		}
		t.Run(p.field, func(t *testing.T) {
			results := map[string]int{}
			for i, s := range list {
				q, _ := json.Marshal(s)
				res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: contract.VerifySchema, Arguments: json.RawMessage(p.body(string(q)))})
				if err != nil {
					t.Fatalf("string #%d: protocol error %v, want a tool result", i, err)
				}
				if err := outSchema.Validate(res.StructuredContent); err != nil {
					t.Errorf("string #%d: structured content does not match the output schema: %v", i, err)
				}
				sc := testkit.Structured(t, res)
				if res.IsError {
					code, _ := sc["code"].(string)
					results[code]++
					if code != tools.CodeInvalidRequest {
						t.Errorf("string #%d: error %q, want %q", i, code, tools.CodeInvalidRequest)
					}
					b := testkit.StructuredJSON(t, res)
					if !(p.key && plainName.MatchString(s)) && testkit.Echoes(b, s) {
						t.Errorf("string #%d %q is quoted by the error: %.300s", i, s, b)
					}
				} else {
					results[sc["result"].(string)]++
				}
				if t.Failed() {
					t.Fatalf("stopping at string #%d %q", i, s)
				}
			}
			t.Logf("%s: %v", p.field, results)
		})
	}
}
