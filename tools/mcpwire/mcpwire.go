// Package mcpwire holds what the two adapters of MCP over HTTP share: the
// REST adapter (package rest), which mounts /mcp, bounds and reads its body
// and checks its Host and Origin, and the MCP adapter (package mcpserver),
// which serves it. The REST adapter hands the body it read to the MCP
// handler in the request's context (WithBody), and both answer a refused
// request with the same JSON-RPC error (WriteRefusal). It imports nothing of
// the service, so neither adapter imports the other.
package mcpwire

import (
	"context"
	"net/http"
	"strconv"
)

// JSON-RPC 2.0 error codes of the errors written without the SDK.
const (
	ParseError     = -32700
	InvalidRequest = -32600
)

// bodyKey keys the body of an MCP request, as the HTTP front read it, in
// the request's context.
type bodyKey struct{}

// WithBody keeps the body of an MCP request, as the HTTP front read it,
// in ctx: the MCP handler serves it instead of reading the request's body
// again, and words the SDK's refusals by it.
func WithBody(ctx context.Context, body []byte) context.Context {
	return context.WithValue(ctx, bodyKey{}, body)
}

// Body is the body WithBody kept in ctx, or nil.
func Body(ctx context.Context) []byte {
	body, _ := ctx.Value(bodyKey{}).([]byte)
	return body
}

// ErrorFrame is a JSON-RPC error with a null id, code and message, ending
// in a newline.
func ErrorFrame(code int, message string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.Itoa(code) + `,"message":` + strconv.Quote(message) + "}}\n")
}

// WriteRefusal answers an MCP request over HTTP with status and a
// JSON-RPC error of code -32600 (Invalid Request), a null id and message,
// which must be fixed text: nothing the caller sent.
func WriteRefusal(w http.ResponseWriter, status int, message string) {
	body := ErrorFrame(InvalidRequest, message)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
