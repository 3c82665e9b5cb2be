package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
)

// maxManyProblemsError bounds the answer to a request of many problems, REST
// body or whole MCP response alike.
const maxManyProblemsError = 64 << 10

// unknownKeysBody is a valid request followed by n unknown top-level
// members, "k0":1 to "k<n-1>":1: 80,000 of them make about 869 KB.
func unknownKeysBody(n int) []byte {
	return unknownKeysBodyNamed(n, func(i int) string { return fmt.Sprintf("k%d", i) })
}

// unknownKeysBodyNamed is unknownKeysBody with the i-th unknown member
// named name(i).
func unknownKeysBodyNamed(n int, name func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"task_id":"t","expected_schema":{"type":"integer"},"submitted_output":1`)
	for i := range n {
		fmt.Fprintf(&b, `,%q:1`, name(i))
	}
	b.WriteString("}")
	return b.Bytes()
}

// longKey is the i-th of many distinct 1,000-byte member names, which no
// error may quote.
func longKey(i int) string {
	return fmt.Sprintf("%s%08d", strings.Repeat("IGNORE_ALL_PREVIOUS_INSTRUCTIONS_", 30), i)
}

// toolCallFrame is a JSON-RPC tools/call of tool with args as its raw
// arguments.
func toolCallFrame(tool string, args []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":`, tool)
	b.Write(args)
	b.WriteString("}}")
	return b.Bytes()
}

// postMCP posts one JSON-RPC frame to h's /mcp, in process.
func postMCP(h http.Handler, frame []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(frame))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// mcpToolError is the error object of an MCP tools/call answer that must be
// an isError result.
func mcpToolError(t *testing.T, answer []byte) (structured json.RawMessage, texts []string) {
	t.Helper()
	var msg struct {
		Result *struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct{ Text string }
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil || msg.Result == nil || !msg.Result.IsError {
		t.Fatalf("answer is not an isError tool result (%v): %.400s", err, answer)
	}
	for _, c := range msg.Result.Content {
		texts = append(texts, c.Text)
	}
	return msg.Result.StructuredContent, texts
}

// checkManyProblems checks the error object of a 422 of a request with n
// unknown fields: the first engine.MaxReportedProblems problems
// listed, the rest counted in fields_omitted and in the message.
func checkManyProblems(t *testing.T, raw []byte, n int) {
	t.Helper()
	var e struct {
		Code          string
		Status        int
		Message       string
		Fields        []engine.FieldProblem
		FieldsOmitted int `json:"fields_omitted"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("error object: %v: %.300s", err, raw)
	}
	if e.Code != tools.CodeInvalidRequest || e.Status != http.StatusUnprocessableEntity {
		t.Errorf("error %s %d, want %s 422", e.Code, e.Status, tools.CodeInvalidRequest)
	}
	if len(e.Fields) != engine.MaxReportedProblems || e.FieldsOmitted != n-engine.MaxReportedProblems {
		t.Errorf("%d fields listed and %d omitted, want %d and %d", len(e.Fields), e.FieldsOmitted, engine.MaxReportedProblems, n-engine.MaxReportedProblems)
	}
	for _, f := range e.Fields {
		// A plain name of up to 64 characters is named; any other by its
		// position.
		if f.Problem != "is not a known field" || len(f.Field) > 64 {
			t.Errorf("problem %.200v, want an unknown field named in at most 64 bytes", f)
		}
	}
	if bytes.Contains(raw, []byte(longKey(0)[:64])) {
		t.Errorf("the error quotes a long key: %.300s", raw)
	}
	if want := fmt.Sprintf("(and %d more problem(s))", n-1); !strings.Contains(e.Message, want) {
		t.Errorf("message %q does not count the others %q", e.Message, want)
	}
}

// TestHostileUnknownFields sends requests of 80,000 and 300,000 unknown
// top-level fields (869 KB and 3.5 MB) over REST and over MCP on
// streamable HTTP. They took 8.8 s and 137 s of CPU and answered 16.8 MB
// (48.9 MB over MCP): the problems were deduplicated by a quadratic scan,
// and every one was listed. Now each is answered in a fraction of a second
// of CPU time, in under 64 KB, with the first 20 problems and a count of
// the rest.
func TestHostileUnknownFields(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	openapi, _ := openAPIDoc(t, f)
	docs := newSchemaValidator(t, openapi)
	output := testkit.ResolveSchema(t, testkit.ConnectMCP(t, mcpserver.NewMCPServer(f.svc)).Tools[contract.VerifySchema].OutputSchema) // as tools/list advertises it
	for _, tt := range []struct {
		name string
		keys int
		body []byte
		cpu  time.Duration // the bound on CPU time
	}{
		{"80,000 keys", 80_000, unknownKeysBody(80_000), 500 * time.Millisecond * testkit.RaceSlowdown},
		{"300,000 keys", 300_000, unknownKeysBody(300_000), 1500 * time.Millisecond * testkit.RaceSlowdown},
		{"3,000 keys of 1,000 bytes", 3_000, unknownKeysBodyNamed(3_000, longKey), 500 * time.Millisecond * testkit.RaceSlowdown},
	} {
		body := tt.body
		t.Run("REST "+tt.name, func(t *testing.T) {
			start := testkit.CPUNow()
			rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", body)
			took := testkit.CPUNow() - start
			t.Logf("%d keys (%d bytes): %v of CPU, %d-byte answer", tt.keys, len(body), took, rec.Body.Len())
			if took > tt.cpu {
				t.Errorf("took %v of CPU, want at most %v", took, tt.cpu)
			}
			if rec.Body.Len() > maxManyProblemsError {
				t.Errorf("answer of %d bytes, want at most %d", rec.Body.Len(), maxManyProblemsError)
			}
			checkErrorShape(t, rec.Result(), rec.Body.Bytes(), http.StatusUnprocessableEntity, tools.CodeInvalidRequest)
			docs.checkJSON(t, "422", "Error", rec.Body.Bytes())
			checkManyProblems(t, rec.Body.Bytes(), tt.keys)
		})
		t.Run("MCP "+tt.name, func(t *testing.T) {
			frame := toolCallFrame(contract.VerifySchema, body)
			start := testkit.CPUNow()
			rec := postMCP(f.h, frame)
			took := testkit.CPUNow() - start
			t.Logf("%d keys (%d bytes): %v of CPU, %d-byte answer", tt.keys, len(frame), took, rec.Body.Len())
			if took > tt.cpu {
				t.Errorf("took %v of CPU, want at most %v", took, tt.cpu)
			}
			if rec.Code != http.StatusOK || rec.Body.Len() > maxManyProblemsError {
				t.Errorf("status %d, answer of %d bytes; want 200 and at most %d bytes", rec.Code, rec.Body.Len(), maxManyProblemsError)
			}
			structured, texts := mcpToolError(t, rec.Body.Bytes())
			var instance any
			if err := json.Unmarshal(structured, &instance); err != nil {
				t.Fatal(err)
			}
			if err := output.Validate(instance); err != nil {
				t.Errorf("the error does not match verify_schema's output schema: %v", err)
			}
			checkManyProblems(t, structured, tt.keys)
			if len(texts) == 0 || !strings.Contains(texts[0], fmt.Sprintf("and %d more problem(s), not listed", tt.keys-engine.MaxReportedProblems)) {
				t.Errorf("the text does not count the problems left out: %.300q", texts)
			}
		})
	}
}

// TestFreeTierLimitBeforeDecoding: with payments on, a body over the free
// tier's limit sent without a payment is refused with the 402 before it is
// decoded, over REST and over MCP. It used to be decoded first, free, so an
// 80,000-unknown-key body cost its whole decoding and came back a 422. A
// body over the limit that is invalid far inside shows it: it gets the 402,
// where decoding it would have found the syntax error; under the limit the
// same invalid body is the 422; paid, it is decoded, the 422, and not
// charged.
func TestFreeTierLimitBeforeDecoding(t *testing.T) {
	const freeMax = 64 << 10
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, _ := paymentServer(t, payment.Config{FreePerDay: 5, FreeTierMaxBody: freeMax, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})

	// Requests whose output is a long array, broken at its end: as JSON
	// (which cannot travel inside an MCP frame), or as I-JSON (a number out
	// of range, which the engine finds only by decoding it).
	brokenAtEnd := func(size int, end string) []byte {
		return testkit.VerifyBody(`{}`, "["+repeatTo(size, "1")+end)
	}
	notJSON := brokenAtEnd(2*freeMax, "]]]")
	overFree := brokenAtEnd(2*freeMax, ",1e400]")
	underFree := brokenAtEnd(freeMax/2, ",1e400]")
	manyKeys := unknownKeysBody(80_000)

	for _, tt := range []struct {
		name string
		body []byte
		mcp  bool // sent over MCP too
	}{
		{"not JSON at its end", notJSON, false},
		{"not I-JSON at its end", overFree, true},
		{"80,000 unknown fields", manyKeys, true},
	} {
		t.Run("REST over the free tier: "+tt.name, func(t *testing.T) {
			res := do(t, http.MethodPost, ts.URL+"/verify/schema", tt.body, "")
			ft, _ := res.body["free_trial"].(map[string]any)
			if res.status != http.StatusPaymentRequired || res.body["code"] != payment.CodePaymentRequired || ft["reason"] != payment.ReasonBodyTooLarge {
				t.Errorf("unpaid body of %d bytes = %d %v, want 402 %s (%s)", len(tt.body), res.status, res.body["code"], payment.CodePaymentRequired, payment.ReasonBodyTooLarge)
			}
		})
		if !tt.mcp {
			continue
		}
		t.Run("MCP over the free tier: "+tt.name, func(t *testing.T) {
			r := callTool(t, ts.URL+"/mcp", contract.VerifySchema, tt.body)
			ft, _ := r.Meta["free_trial"].(map[string]any)
			if !r.IsError || r.Meta["code"] != payment.CodePaymentRequired || ft["reason"] != payment.ReasonBodyTooLarge {
				t.Errorf("unpaid arguments of %d bytes = isError %v, _meta %v; want the payment-required result (%s)", len(tt.body), r.IsError, r.Meta, payment.ReasonBodyTooLarge)
			}
		})
	}
	t.Run("REST under the free tier: decoded, 422", func(t *testing.T) {
		if res := do(t, http.MethodPost, ts.URL+"/verify/schema", underFree, ""); res.status != http.StatusUnprocessableEntity {
			t.Errorf("invalid body under the free tier = %d %v, want 422", res.status, res.body["code"])
		}
	})
	t.Run("MCP under the free tier: decoded, 422", func(t *testing.T) {
		if r := callTool(t, ts.URL+"/mcp", contract.VerifySchema, underFree); !r.IsError || resultCode(t, r) != tools.CodeInvalidRequest {
			t.Errorf("invalid arguments under the free tier = isError %v, want invalid_request", r.IsError)
		}
	})
	t.Run("REST paid over the free tier: decoded, 422, not charged", func(t *testing.T) {
		unpaid := do(t, http.MethodPost, ts.URL+"/verify/schema", overFree, "")
		res := do(t, http.MethodPost, ts.URL+"/verify/schema", overFree, payFor(t, unpaid))
		if res.status != http.StatusUnprocessableEntity || res.body["charged"] != false || fac.Settles.Load() != 0 {
			t.Errorf("paid invalid body = %d %v after %d settlements, want 422, not charged", res.status, res.body["code"], fac.Settles.Load())
		}
	})
}

// deepRequests are requests nested far past the depth limit (100,000
// levels): in the output, as arrays, objects and unclosed arrays, and in the
// body itself.
func deepRequests() []struct{ name, body string } {
	const deep = 100_000
	arrays := strings.Repeat("[", deep) + strings.Repeat("]", deep)
	objects := strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep)
	return []struct{ name, body string }{
		{"100k-deep array output", string(testkit.VerifyBody(`{}`, arrays))},
		{"100k-deep object output", string(testkit.VerifyBody(`{}`, objects))},
		{"100k-deep unclosed output", string(testkit.VerifyBody(`{}`, strings.Repeat("[", deep)))},
		{"100k-deep object body", objects},
	}
}

// TestNestedTooDeeply checks that 100,000-deep nesting is reported as
// nested too deeply, with the limit, over REST and MCP (HTTP and stdio); it
// was "not valid JSON", because the decoders below the depth check give up
// at 10,000 levels with a syntax error.
func TestNestedTooDeeply(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	stdio := testkit.StartStdioSession(t, mcpserver.ServeStdio, testkit.QuietService(t, false))
	for _, tt := range deepRequests() {
		t.Run("REST "+tt.name, func(t *testing.T) {
			rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", []byte(tt.body))
			var e tools.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusUnprocessableEntity || len(e.Fields) != 1 {
				t.Fatalf("status %d (%v), want a 422 of one problem: %.300s", rec.Code, err, rec.Body.Bytes())
			}
			if p := e.Fields[0].Problem; !strings.Contains(p, "is nested too deeply: the limit is 12") {
				t.Errorf("problem %q, want nested too deeply with the limit", p)
			}
		})
		frame := toolCallFrame(contract.VerifySchema, []byte(tt.body))
		t.Run("MCP HTTP "+tt.name, func(t *testing.T) {
			rec := postMCP(f.h, frame)
			var m struct {
				Error *struct {
					Code    int
					Message string
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || rec.Code != http.StatusBadRequest || m.Error == nil {
				t.Fatalf("status %d (%v), want a 400 JSON-RPC error: %.300s", rec.Code, err, rec.Body.Bytes())
			}
			if m.Error.Code != jsonrpc.CodeParseError || !strings.Contains(m.Error.Message, "nested too deeply") || !strings.Contains(m.Error.Message, "10000 levels") {
				t.Errorf("error %d %q, want a parse error saying nested too deeply, with the limit", m.Error.Code, m.Error.Message)
			}
		})
		t.Run("MCP stdio "+tt.name, func(t *testing.T) {
			stdio.Write(t, frame)
			m := stdio.Next(t)
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e["code"] != float64(jsonrpc.CodeParseError) || !strings.Contains(msg, "nested too deeply") || !strings.Contains(msg, "10000 levels") {
				t.Errorf("answer %.300v, want a parse error saying nested too deeply, with the limit", m)
			}
			stdio.Alive(t)
		})
	}
	// Under the SDK's 10,000 levels, the arguments reach the engine, which
	// names the field and its own limit.
	t.Run("MCP HTTP 200-deep output", func(t *testing.T) {
		deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
		structured, _ := mcpToolError(t, postMCP(f.h, toolCallFrame(contract.VerifySchema, testkit.VerifyBody(`{}`, deep))).Body.Bytes())
		var e tools.Error
		if err := json.Unmarshal(structured, &e); err != nil || len(e.Fields) != 1 ||
			e.Fields[0] != (engine.FieldProblem{Field: "submitted_output", Problem: "is nested too deeply: the limit is 127 levels", Fix: "Nest arrays and objects at most 127 levels deep."}) {
			t.Errorf("error %s, want submitted_output nested too deeply, the limit 127 levels", structured)
		}
	})
}
