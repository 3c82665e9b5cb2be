package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/tools/contract"
)

// The JSON-RPC errors of the MCP server name the kind of mistake and the
// valid choices, and never carry what the caller sent. The SDK's own
// messages quote the caller: `unknown tool "…"`, `unknown prompt "…"`,
// `"…" unsupported` for a method, `handling 'tools/call': invalid params:
// unmarshaling "…"` for params that are not an object, a resource URI in
// the error's data — verbatim and unbounded (up to the frame or body
// limit), a channel for text aimed at the model that reads the error.
// Every JSON-RPC error the server sends therefore goes through
// safeRPCError: a message of this file is kept, any other is replaced by
// the message of its code (refusalMessage), and data is dropped. The code
// is kept. Three layers apply it: the receiving middleware
// refuseWithoutEcho (errors of the method handlers, where the method is
// known), stdioConn.Write (errors the SDK raises before any middleware
// runs: an unknown method, params it cannot decode) and sdkErrorGuard
// over HTTP (the same, in JSON bodies).
var (
	// mcpToolNames are the server's tools, as newMCPServer registers them.
	mcpToolNames = []string{contract.VerifySchema, contract.Record, contract.VerifyReceipt}

	toolChoices = strings.Join(mcpToolNames, ", ")

	// methodChoices are the methods a client uses with this server.
	methodChoices = "initialize, ping, tools/list, tools/call, logging/setLevel (prompts/list, resources/list and resources/templates/list answer empty lists); notifications: notifications/initialized, notifications/cancelled"

	msgUnknownTool = "Unknown tool: the name is not one of this server's tools. " +
		"Call tools/call with \"name\" one of: " + toolChoices + " (tools/list describes them)."
	msgUnknownPrompt = "Unknown prompt: this server has no prompts (prompts/list is empty). " +
		"Its tools are: " + toolChoices + "."
	msgUnknownResource = "Resource not found: this server has no resources (resources/list is empty). " +
		"Its tools are: " + toolChoices + "."
	msgMethodNotFound = "Method not found: the method is not one this server serves. Methods: " + methodChoices + "."
	msgInvalidParams  = "Invalid params: \"params\" must be a JSON object with the members the method defines " +
		"(tools/call: {\"name\": one of " + toolChoices + ", \"arguments\": {…}}; a cursor only as tools/list returned it)."
	msgInvalidRequest = "Invalid Request: a request carries an \"id\" and a notification none, " +
		"and every method but ping, the notifications and the list methods needs \"params\" (a JSON object)."
	msgNotReady = "Refused: a session starts with one initialize call " +
		"(params {\"protocolVersion\", \"capabilities\", \"clientInfo\"}), then notifications/initialized; " +
		"tools/list and tools/call work after it."
	msgInternal        = "Internal error: the server could not complete the request."
	msgHeaderMismatch  = "Header mismatch: the Mcp-Protocol-Version header must be sent and equal the request's _meta protocol version."
	msgUnsupportedVers = "Unsupported protocol version: initialize with a protocol version this server supports (initialize answers with the one it chose)."
	msgInvalidLevel    = "Invalid params: logging/setLevel takes {\"level\": one of " + strings.Join(mcpLogLevels, ", ") + "}."
)

// mcpLogLevels are the levels of logging/setLevel (the MCP LoggingLevel
// enum, RFC 5424's severities).
var mcpLogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// refusalMessages are the messages safeRPCError keeps.
var refusalMessages = []string{
	msgUnknownTool, msgUnknownPrompt, msgUnknownResource, msgMethodNotFound, msgInvalidParams,
	msgInvalidRequest, msgNotReady, msgInternal, msgHeaderMismatch, msgUnsupportedVers, msgInvalidLevel,
	msgBadID, msgDuplicateKey,
}

// refusalMessage is the message of a JSON-RPC error of code when nothing
// more is known about it. Only fixed text and the code appear in it.
func refusalMessage(code int64) string {
	switch code {
	case jsonrpc.CodeParseError:
		return "Parse error: the message is not one valid JSON value."
	case jsonrpc.CodeInvalidRequest:
		return msgInvalidRequest
	case jsonrpc.CodeMethodNotFound:
		return msgMethodNotFound
	case jsonrpc.CodeInvalidParams:
		return msgInvalidParams
	case jsonrpc.CodeInternalError:
		return msgInternal
	case 0: // a plain error of the SDK: in practice, the session state
		return msgNotReady
	case mcp.CodeHeaderMismatch:
		return msgHeaderMismatch
	case mcp.CodeUnsupportedProtocolVersion:
		return msgUnsupportedVers
	default:
		return fmt.Sprintf("The request was refused (JSON-RPC error %d).", code)
	}
}

// safeRPCError returns err as a JSON-RPC error that carries nothing of the
// caller's: its code, and its message only when it is one of
// refusalMessages (else refusalMessage of the code); never data.
func safeRPCError(err error) *jsonrpc.Error {
	code, message := rpcCodeMessage(err)
	return safeWireError(code, message)
}

// safeWireError is safeRPCError of a code and message as sent.
func safeWireError(code int64, message string) *jsonrpc.Error {
	if !slices.Contains(refusalMessages, message) {
		message = refusalMessage(code)
	}
	return &jsonrpc.Error{Code: code, Message: message}
}

// rpcCodeMessage returns the code and message err is sent with, as the
// SDK's JSON-RPC layer derives them: a *jsonrpc.Error as is; any other
// error with its own text and the code of the *jsonrpc.Error it wraps (0
// when none).
func rpcCodeMessage(err error) (int64, string) {
	if w, ok := err.(*jsonrpc.Error); ok {
		return w.Code, w.Message
	}
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		return w.Code, err.Error()
	}
	return 0, err.Error()
}

// refuseWithoutEcho is the server's receiving middleware that rewrites every
// error of a method handler with safeRPCError. Where the method tells the
// mistake apart, it names it: an unknown tool (the SDK's `unknown tool
// "…"`), an unknown prompt, a resource not found (the SDK's data carries
// the URI). It also refuses a logging/setLevel whose level is not one of
// mcpLogLevels before the SDK takes it: the SDK keeps any string and logs
// it verbatim ("client log level set"), a megabyte in, a megabyte of log.
func refuseWithoutEcho(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "logging/setLevel" {
			//lint:ignore SA1019 logging/setLevel is still answered (deprecated from 2026-07-28 on).
			p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
			if p == nil || !slices.Contains(mcpLogLevels, string(p.Level)) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgInvalidLevel}
			}
		}
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		code, _ := rpcCodeMessage(err)
		switch {
		case method == "tools/call" && code == jsonrpc.CodeInvalidParams && !knownTool(req):
			return nil, &jsonrpc.Error{Code: code, Message: msgUnknownTool}
		case method == "prompts/get" && code == jsonrpc.CodeInvalidParams:
			return nil, &jsonrpc.Error{Code: code, Message: msgUnknownPrompt}
		//lint:ignore SA1019 the SDK still answers a missing resource with this code.
		case method == "resources/read" && code == mcp.CodeResourceNotFound:
			return nil, &jsonrpc.Error{Code: code, Message: msgUnknownResource}
		}
		return nil, safeRPCError(err)
	}
}

// knownTool reports whether req is a tools/call of one of mcpToolNames.
func knownTool(req mcp.Request) bool {
	r, ok := req.(*mcp.CallToolRequest)
	return ok && r.Params != nil && slices.Contains(mcpToolNames, r.Params.Name)
}

// safeRPCBody returns a JSON body the SDK wrote over HTTP — one JSON-RPC
// response, or an array of them — with every error in it rewritten by
// safeWireError, or body itself when it holds no error (a result is not
// read past its "result" member) or is not such a body.
func safeRPCBody(body []byte) []byte {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return body
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil {
			return body
		}
		changed := false
		for i, m := range batch {
			if safe, ok := safeRPCResponse(m); ok {
				batch[i], changed = safe, true
			}
		}
		if !changed {
			return body
		}
		out, err := json.Marshal(batch)
		if err != nil {
			return body
		}
		return out
	}
	if safe, ok := safeRPCResponse(trimmed); ok {
		return safe
	}
	return body
}

// safeRPCResponse returns the JSON-RPC response msg re-encoded with its
// error made safe, or false when msg is not an error response.
func safeRPCResponse(msg []byte) ([]byte, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	isError := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		switch name.String() {
		case "result", "method":
			return nil, false // a result, or not a response
		case "error":
			isError = true
		}
		if err := dec.SkipValue(); err != nil {
			return nil, false
		}
	}
	if !isError {
		return nil, false
	}
	decoded, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, false
	}
	resp, ok := decoded.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return nil, false
	}
	resp.Error = safeRPCError(resp.Error)
	out, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return nil, false
	}
	return out, true
}
