// Package mcpserver is the MCP adapter of the service core (package
// tools): the go-sdk server with the tools verify_schema,
// get_verification_record and verify_receipt, their payment steps
// (x402 in _meta), the stdio transport with its drain and backpressure, and
// the stateless streamable-HTTP handler that package rest mounts at /mcp.
// It keeps only transport work: reading tool arguments and writing
// CallToolResults.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpwire"
)

// RemoteAddrHeader carries the client's address (host:port) to tool
// handlers over HTTP: NewMCPHandler overwrites it with the connection's
// address on every request, so a value sent by the client never arrives.
// Handlers read it with ClientAddr.
const RemoteAddrHeader = "X-Mcp-Remote-Addr"

// mcpServerName names the server in the MCP initialize result.
const mcpServerName = "verifier"

// mcpInstructions is the server's `instructions`: the workflow in brief.
const mcpInstructions = `Agent Output Verifier: checks an agent's JSON output against the buyer's JSON Schema (draft 2020-12 or draft-07) plus optional bounds and cross-field rules, and answers pass/fail with an Ed25519-signed receipt anyone can check offline.

Workflow:
1. Before delivering (seller) or before paying (buyer), call verify_schema with task_id, expected_schema and submitted_output (plus bounds/rules for totals, dates and cross-field consistency).
2. On result "fail", repair the output from hints[] (each names the check, the $.path, what was expected and what was found) and call verify_schema again. Repeat until "pass".
3. On "pass", attach the whole answer (it is the signed receipt) to the delivery; the buyer pays only after it checks out.
4. To check a receipt someone gave you, call verify_receipt with it (and the original request, to recompute the hashes and re-run the verdict). Pay only when valid is true.
5. To judge a seller before trusting its work, call get_verification_record with its agent_id: a signed 0-100 trust score from its past verdicts.

An invalid request comes back as isError with a JSON error object whose fields[] say what to fix; nothing is charged for it.`

// mcpService is the service as the MCP tools serve it: the handlers of
// the tools and their payment steps.
type mcpService struct{ *tools.Service }

// NewMCPServer returns the verifier's MCP server: the tools verify_schema,
// get_verification_record and verify_receipt, each a thin adapter over a
// typed core of svc, and instructions that summarise the workflow. The same
// server serves stdio (ServeStdio) and HTTP (NewMCPHandler).
func NewMCPServer(svc *tools.Service) *mcp.Server {
	return newMCPServer(svc, svc.Logger())
}

// newMCPServer is NewMCPServer with the SDK's logs going to log.
func newMCPServer(svc *tools.Service, log *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{
		Name:    mcpServerName,
		Title:   "Agent Output Verifier",
		Version: svc.Version,
	}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       log,
		// The tool list never changes. logging/setLevel is answered (a
		// level of the MCP enum; refuseWithoutEcho refuses any other), so
		// the logging capability is declared, as the spec asks of a
		// server that answers it; the server has no log messages to send.
		//lint:ignore SA1019 logging is deprecated from 2026-07-28 on; the versions served here still define it.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}},
	})
	srv.AddReceivingMiddleware(refuseWithoutEcho)
	tools := mcpService{svc}
	srv.AddTool(verifySchemaTool(), tools.mcpVerifySchema)
	srv.AddTool(recordTool(), tools.mcpRecord)
	srv.AddTool(verifyReceiptTool(), tools.mcpVerifyReceipt)
	return srv
}

// ServeStdio serves MCP on in and out (normally os.Stdin and os.Stdout) as
// newline-delimited JSON-RPC until the client closes in (every request
// read is answered first) or ctx is done.
// Nothing but protocol frames is written to out; logs go to svc.Log. A
// cancelled ctx is a clean shutdown and returns nil.
func ServeStdio(ctx context.Context, svc *tools.Service, in io.Reader, out io.Writer) error {
	return serveStdio(ctx, NewMCPServer(svc), in, out)
}

// serveStdio serves srv as ServeStdio describes.
func serveStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer) error {
	// One bad frame must not end the session, and a client that closes its
	// input at once must still get every answer: see stdioTransport.
	err := srv.Run(ctx, newStdioTransport(ctx, in, out))
	if err != nil && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("serving mcp on stdio: %w", err)
	}
	return nil
}

// NewMCPHandler returns the streamable-HTTP MCP endpoint (mount it at
// /mcp). It is stateless with JSON responses: every POST carries one
// complete exchange and is answered with application/json, so any replica
// can serve any request, no session state lives in memory, and per-request
// data (the client address, a payment in _meta) always belongs to the
// request at hand. The verifier never calls back into the client (no
// sampling, elicitation or server-initiated notifications), which is all
// that stateful mode would add; GET and DELETE answer 405.
//
// Before the SDK sees a request, the handler checks its Accept header,
// its envelope and its batching (httpFront), and overwrites
// RemoteAddrHeader with r.RemoteAddr. A caller that trusts a proxy sets r.RemoteAddr to the
// forwarded client address before calling it.
//
// The SDK's INFO logs are written at DEBUG level: stateless, it opens and
// closes a session for every request and logs both ("server connecting",
// "server session connected", "server session disconnected", with no
// session id), three lines per call that say nothing the access log does
// not. Its warnings and errors keep their level.
//
// The handler does not check Host or Origin (the DNS-rebinding defence):
// mount it behind a check of both, as package rest does for every route.
func NewMCPHandler(svc *tools.Service) http.Handler {
	log := slog.New(infoAsDebug{svc.Logger().Handler()})
	return mcpHTTPHandler(newMCPServer(svc, log), log)
}

// mcpHTTPHandler serves srv as NewMCPHandler describes.
func mcpHTTPHandler(srv *mcp.Server, log *slog.Logger) http.Handler {
	return mcpHTTPHandlerBatch(srv, log, MaxBatchMessages, MaxBatchAnswerBytes)
}

// mcpHTTPHandlerBatch is mcpHTTPHandler with other batch bounds.
func mcpHTTPHandlerBatch(srv *mcp.Server, log *slog.Logger, maxBatch, maxBatchBytes int) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       log,
		// The Host (and Origin) check is the caller's: package rest checks
		// every route, /mcp included, by one rule that also admits the
		// names an operator allows (--public-url, --allowed-host), which
		// the SDK's check would refuse on a loopback listener.
		DisableLocalhostProtection: true,
	})
	sdk := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&sdkErrorGuard{ResponseWriter: w, body: mcpwire.Body(r.Context())}, r)
	})
	front := &httpFront{sdk: sdk, maxBatch: maxBatch, maxBatchBytes: maxBatchBytes}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set(RemoteAddrHeader, r.RemoteAddr)
		front.ServeHTTP(w, r)
	})
}

// ClientAddr returns the client's address of a tool call that came over
// NewMCPHandler, or "" over stdio and in-memory transports.
func ClientAddr(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	return req.Extra.Header.Get(RemoteAddrHeader)
}

// answerResult is a successful tool result: the signed answer as structured
// content, and as content a short text for people followed by the same JSON
// for clients that read only text.
func answerResult(text string, answer []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(answer)}},
		StructuredContent: json.RawMessage(answer),
	}
}

// errorResult is a tool result with isError set: the error object of
// SPEC §6 as structured content and, as text, its message and fixes
// followed by the same JSON.
func errorResult(e *tools.Error) *mcp.CallToolResult {
	if e.NextActions == nil {
		e.NextActions = []engine.NextAction{}
	}
	body, err := ijson.Marshal(e)
	if err != nil { // an Error always encodes; keep a readable result anyway
		body = []byte(`{"code":"internal_error","status":500,"retryable":false,"charged":false,"message":"The error could not be encoded.","next_actions":[]}`)
	}
	var text strings.Builder
	fmt.Fprintf(&text, "Error %s (%d): %s", e.Code, e.Status, e.Message)
	for _, f := range e.Fields {
		fmt.Fprintf(&text, "\n- %s %s. Fix: %s", f.Field, f.Problem, f.Fix)
	}
	if e.FieldsOmitted > 0 {
		fmt.Fprintf(&text, "\n- and %d more problem(s), not listed.", e.FieldsOmitted)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text.String()}, &mcp.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body),
		IsError:           true,
	}
}

// logCall records one tool call at debug level: the tool, how it ended and
// how long it took — never the caller's values.
func (s mcpService) logCall(ctx context.Context, tool string, start time.Time, outcome string) {
	log := s.Logger()
	if !log.Enabled(ctx, slog.LevelDebug) {
		return // without building the record's arguments
	}
	log.DebugContext(ctx, "mcp tool call", "tool", tool, "outcome", outcome, "duration", time.Since(start))
}

// toolArgs splits a tool's arguments object into its members, kept raw
// (ijson.SplitMembers). Arguments that are absent mean {}. A non-object, a
// duplicate or unknown member, or invalid JSON is a 422 naming the field;
// members are looked at in order, so the first problem is the one named.
func toolArgs(raw json.RawMessage, known ...string) (map[string][]byte, *tools.Error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string][]byte{}, nil
	}
	invalid := func(field, problem, fix string) *tools.Error {
		return tools.InvalidRequest([]engine.FieldProblem{{Field: field, Problem: problem, Fix: fix}})
	}
	fixKnown := "Send only these arguments: " + strings.Join(known, ", ") + "."
	if text := bytes.TrimLeft(raw, " \t\r\n"); text[0] != '{' {
		return nil, invalid("arguments", "must be a JSON object", fixKnown)
	}
	list, in, err := ijson.SplitMembers(raw, ijson.SplitLikeJSONText)
	members := make(map[string][]byte, len(list))
	for i, m := range list {
		if i == in {
			return nil, invalid(fieldName(m.Name, known), argsSyntaxProblem(err), "Send well-formed JSON (I-JSON, RFC 7493).")
		}
		if !slices.Contains(known, m.Name) {
			return nil, invalid(fieldName(m.Name, known), "is not a known argument", fixKnown)
		}
		members[m.Name] = bytes.Clone(m.Raw)
	}
	if err != nil {
		return nil, invalid("arguments", argsSyntaxProblem(err), "Send the arguments as one JSON object without duplicate keys.")
	}
	return members, nil
}

// fieldName names a member in an error without echoing an unknown key.
func fieldName(key string, known []string) string {
	if slices.Contains(known, key) {
		return key
	}
	return "arguments"
}

func argsSyntaxProblem(err error) string {
	if errors.Is(err, ijson.ErrDuplicate) {
		return "has a duplicate key (I-JSON forbids it)"
	}
	return "is not valid JSON"
}
