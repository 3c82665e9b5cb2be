package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/tools/mcpwire"
)

// Bounds of a JSON-RPC batch over HTTP (see httpFront.serveBatch).
const (
	// MaxBatchMessages is the most messages one batch may carry.
	MaxBatchMessages = 16
	// MaxBatchAnswerBytes is how much of a batch's answers is written
	// before its remaining requests are answered "not run" instead of
	// being run; the answer may pass it by one message's answer.
	MaxBatchAnswerBytes = 1 << 20
)

// protocolNoBatches is the first MCP version without JSON-RPC batches.
const protocolNoBatches = "2025-06-18"

// rpcNotRun is the JSON-RPC code (the implementation-defined server-error
// range) of a request of a batch that was not run.
const rpcNotRun = -32000

// Refusals of the HTTP front, before the SDK sees the request.
var (
	msgAccept = "Bad Request: the Accept header must list both application/json and text/event-stream; " +
		"send Accept: application/json, text/event-stream. Nothing was charged."
	msgBatchesRemoved = "Invalid Request: JSON-RPC batches were removed in MCP " + protocolNoBatches +
		", and this request's MCP-Protocol-Version is that version or a later one: send one message per request. Nothing was run or charged."
	msgBatchEmpty   = "Invalid Request: the batch is empty; send at least one message. Nothing was charged."
	msgBatchTooLong = fmt.Sprintf("Invalid Request: a batch may carry at most %d messages; send the others in further requests "+
		"(or one message per request, as MCP %s and later require). Nothing was run or charged.", MaxBatchMessages, protocolNoBatches)
	msgBatchNotRun = fmt.Sprintf("Not run: the answers to this batch reached %d bytes before this request; nothing was done or charged for it. "+
		"Send it again, alone or in a later batch.", MaxBatchAnswerBytes)
	msgBodyTooLarge = fmt.Sprintf("Payload too large: the body is over %d bytes. Nothing was charged.", mcp.DefaultMaxRequestBodyBytes)
)

// httpFront is what the MCP endpoint does before the SDK reads a POST:
//
//   - an Accept header without application/json and text/event-stream is
//     refused naming the header (the SDK's refusal said only that the
//     body was not a message this server accepts);
//   - a message whose id cannot be echoed exactly, or with a duplicate key,
//     is refused (checkEnvelope), as over stdio;
//   - a JSON-RPC batch, which the SDK answered whole however long (20,000
//     tools/list in a 1.1 MB body made a 525 MB answer), is refused at MCP
//     2025-06-18 and later, which removed batches, and otherwise — MCP
//     2025-03-26, which requires servers to accept batches, is what the
//     SDK assumes of a request without MCP-Protocol-Version — bounded:
//     at most maxBatch messages, run one after another, and once their
//     answers reach maxBatchBytes the requests left are answered "not run"
//     and are not run (nothing done, nothing charged).
type httpFront struct {
	sdk           http.Handler // the SDK's handler behind sdkErrorGuard
	maxBatch      int
	maxBatchBytes int
}

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || baseMediaType(r.Header.Get("Content-Type")) != "application/json" {
		f.sdk.ServeHTTP(w, r) // the SDK's 405 and 415, in the one shape
		return
	}
	if jsonOK, streamOK := acceptsMCP(r.Header.Values("Accept")); !jsonOK || !streamOK {
		mcpwire.WriteRefusal(w, http.StatusBadRequest, msgAccept)
		return
	}
	body := mcpwire.Body(r.Context())
	if body == nil {
		var err error
		if body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes)); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				mcpwire.WriteRefusal(w, http.StatusRequestEntityTooLarge, msgBodyTooLarge)
				return
			}
			mcpwire.WriteRefusal(w, http.StatusBadRequest, sdkErrorMessage(http.StatusBadRequest))
			return
		}
		r = r.WithContext(mcpwire.WithBody(r.Context(), body))
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		f.serveBatch(w, r, trimmed)
		return
	}
	f.serveOne(w, r, body)
}

// serveOne serves a request whose body is one message.
func (f *httpFront) serveOne(w http.ResponseWriter, r *http.Request, body []byte) {
	if problem := checkEnvelope(bytes.TrimSpace(body)); problem != "" {
		mcpwire.WriteRefusal(w, http.StatusBadRequest, problem)
		return
	}
	f.sdk.ServeHTTP(w, r)
}

// serveBatch serves a body that starts as a JSON array, as httpFront
// describes.
func (f *httpFront) serveBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		f.sdk.ServeHTTP(w, r) // not JSON: the SDK's parse error, in the one shape
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v >= protocolNoBatches {
		mcpwire.WriteRefusal(w, http.StatusBadRequest, msgBatchesRemoved)
		return
	}
	switch {
	case len(items) == 0:
		mcpwire.WriteRefusal(w, http.StatusBadRequest, msgBatchEmpty)
		return
	case len(items) > f.maxBatch:
		mcpwire.WriteRefusal(w, http.StatusBadRequest, msgBatchTooLong)
		return
	}
	var answers [][]byte
	size := 0
	for _, item := range items {
		if size >= f.maxBatchBytes {
			if answer := notRun(item); answer != nil {
				answers = append(answers, answer)
			}
			continue
		}
		sub := r.Clone(mcpwire.WithBody(r.Context(), item))
		sub.Body, sub.ContentLength = io.NopCloser(bytes.NewReader(item)), int64(len(item))
		c := &captureWriter{header: http.Header{}}
		f.serveOne(c, sub, item)
		if answer := bytes.TrimSpace(c.body.Bytes()); len(answer) > 0 {
			answers = append(answers, answer)
			size += len(answer)
		}
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted) // only notifications and responses
		return
	}
	out := append([]byte{'['}, bytes.Join(answers, []byte{','})...)
	out = append(out, ']')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// notRun is the answer to a message of a batch left unrun: an error
// with its id for a request, the refusal of a message that is not one,
// and nil for a notification or a response (which get no answer).
func notRun(item []byte) []byte {
	if problem := checkEnvelope(item); problem != "" {
		return bytes.TrimSpace(mcpwire.ErrorFrame(rpcInvalidRequest, problem))
	}
	msg, err := jsonrpc.DecodeMessage(item)
	if err != nil {
		return bytes.TrimSpace(mcpwire.ErrorFrame(rpcInvalidRequest, msgInvalidRequest))
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil
	}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: rpcNotRun, Message: msgBatchNotRun}})
	if err != nil {
		return nil
	}
	return out
}

// captureWriter keeps the answer to one message of a batch.
type captureWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(p)
}

// Flush does nothing: the answer is written when the batch is done.
func (c *captureWriter) Flush() {}

// acceptsMCP reports whether the Accept header values admit the two media
// types of a streamable-HTTP POST, as the SDK reads them (wildcards count;
// parameters are ignored).
func acceptsMCP(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for part := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// baseMediaType is the media type of a Content-Type value, or "".
func baseMediaType(value string) string {
	mediaType, _, err := mime.ParseMediaType(value)
	if err != nil {
		return ""
	}
	return mediaType
}
