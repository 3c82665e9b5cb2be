package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/tools/mcpwire"
)

// MaxStdioFrame bounds one JSON-RPC frame read over stdio, as the SDK's
// own limit does (mcp.DefaultMaxLineLength).
const MaxStdioFrame = 16 << 20

// JSON-RPC 2.0 error codes of the frames the guards answer themselves.
const (
	rpcParseError     = mcpwire.ParseError
	rpcInvalidRequest = mcpwire.InvalidRequest
)

// frameGuard reads stdio input for the MCP transport one newline-delimited
// frame at a time, and answers itself every frame the SDK could not read:
// text that is not JSON, JSON that is not a JSON-RPC 2.0 message, a batch,
// and a frame longer than MaxStdioFrame. The SDK ends the whole session on any of
// those ("invalid character … looking for beginning of value"), so without
// the guard one bad frame stopped the server. The answer is a JSON-RPC
// error with a null id (the id of a frame that could not be read is
// unknown) and a fixed message: nothing of the frame is echoed.
type frameGuard struct {
	in  *bufio.Reader
	out *lockedWriter
	max int
}

// lockedWriter serializes whole writes: the guard's answers and the
// transport's frames (one Write each) never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newFrameGuard guards in; the transport must write through the returned
// guard's out.
func newFrameGuard(in io.Reader, out io.Writer) *frameGuard {
	return &frameGuard{in: bufio.NewReaderSize(in, 64<<10), out: &lockedWriter{w: out}, max: MaxStdioFrame}
}

// Next returns the next message of the input, decoded by the SDK's
// jsonrpc.DecodeMessage, and the length of its frame, after answering every
// bad frame before it. At the end of the input it returns io.EOF (or the
// read error).
func (g *frameGuard) next() (jsonrpc.Message, int, error) {
	for {
		line, err := g.readLine()
		if len(line) > 0 {
			msg, code, problem := decodeFrame(line)
			if code != 0 {
				g.refuse(code, problem)
			} else if msg != nil {
				return msg, len(line), nil // at the end of the input, the next call says so
			}
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// readLine returns the next frame with its newline, or nil after refusing
// one that is too long (or for a blank line).
func (g *frameGuard) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(line)+len(chunk) > g.max {
			// Too long: drop it up to its newline, then refuse it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = g.in.ReadSlice('\n')
			}
			g.refuse(rpcInvalidRequest, fmt.Sprintf("Invalid Request: the frame is longer than %d bytes.", g.max))
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
			return nil, nil
		}
		// The frame is copied out of the reader's buffer: the decoded
		// message keeps parts of it (params) after the next read.
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// decodeFrame decodes a frame as the SDK would, or says why the SDK could
// not read it (code is then not 0).
func decodeFrame(line []byte) (msg jsonrpc.Message, code int, problem string) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, 0, "" // a blank line: nothing to read
	}
	if !json.Valid(line) {
		if nestedPast(line, maxMessageDepth) {
			return nil, rpcParseError, "Parse error: the frame " + tooDeepMessage
		}
		return nil, rpcParseError, "Parse error: the frame is not one valid JSON value (one message per line, no newlines inside it)."
	}
	if line[0] == '[' {
		// MCP 2025-06-18 dropped batches, and the SDK ends a session of
		// that version or later that receives one.
		return nil, rpcInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted; send one message per line."
	}
	if problem := checkEnvelope(line); problem != "" {
		return nil, rpcInvalidRequest, problem
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, rpcInvalidRequest, "Invalid Request: the frame is not a JSON-RPC 2.0 request, notification or response."
	}
	return msg, 0, ""
}

// maxMessageDepth is the deepest nesting of a JSON-RPC message the SDK
// reads (encoding/json's limit); past it, the SDK sees only a syntax error.
const maxMessageDepth = 10000

// nestedPast reports whether the first problem in data, read as one JSON
// text, is nesting past limit levels: what the SDK's decoder, which gives
// up at 10,000 levels with a bare syntax error, cannot tell apart from
// malformed JSON.
func nestedPast(data []byte, limit int) bool {
	var ie *ijson.Error
	return errors.As(ijson.Check(data, &ijson.Options{MaxDepth: limit}), &ie) && ie.Kind == ijson.ErrDepth
}

// tooDeepMessage ends the parse error of a message nested past
// maxMessageDepth.
const tooDeepMessage = "is nested too deeply: a message may nest arrays and objects at most 10000 levels, and a verification request at most the server's depth limit (--max-depth, 128 levels by default)."

// Refuse writes a JSON-RPC error with a null id.
func (g *frameGuard) refuse(code int, message string) {
	_, _ = g.out.Write(mcpwire.ErrorFrame(code, message))
}

// sdkErrorGuard replaces the plain-text error bodies the MCP SDK writes over
// HTTP (http.Error: "malformed payload: unmarshaling jsonrpc message: json:
// invalid character … : }}}", which quotes the request) with a JSON-RPC
// error of a fixed message, keeping the status, and makes every JSON-RPC
// error in a JSON body safe (safeRPCBody): the SDK answers a method it does
// not serve, or params it cannot decode, before any middleware runs, with
// the caller's text in the message. The SDK writes each JSON body with one
// write (writeJSONRPCError, and the flush of a JSON response in
// stream.deliverLocked), so each Write is one body. Every other response
// (event streams, successes) passes through untouched.
//
// A body nested past maxMessageDepth, which the SDK refuses as malformed,
// gets a parse error that says so instead. body is the request body, when
// known (mcpLimits keeps it in the request context).
type sdkErrorGuard struct {
	http.ResponseWriter
	body     []byte
	replaced bool
}

func (g *sdkErrorGuard) WriteHeader(code int) {
	h := g.Header()
	if code >= 400 && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		g.replaced = true
		body := mcpwire.ErrorFrame(rpcInvalidRequest, sdkErrorMessage(code))
		if code == http.StatusBadRequest && nestedPast(g.body, maxMessageDepth) {
			body = mcpwire.ErrorFrame(rpcParseError, "Parse error: the body "+tooDeepMessage)
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		g.ResponseWriter.WriteHeader(code)
		_, _ = g.ResponseWriter.Write(body)
		return
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *sdkErrorGuard) Write(p []byte) (int, error) {
	if g.replaced {
		return len(p), nil // the SDK's text, dropped
	}
	if strings.HasPrefix(g.Header().Get("Content-Type"), "application/json") {
		if _, err := g.ResponseWriter.Write(safeRPCBody(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return g.ResponseWriter.Write(p)
}

// Unwrap gives http.ResponseController the underlying writer.
func (g *sdkErrorGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func sdkErrorMessage(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "Invalid Request: the body is not a JSON-RPC 2.0 message this server accepts " +
			"(one JSON object; a request with an \"id\", a notification without; a method it serves). " +
			"Methods: " + methodChoices + ". Nothing was charged."
	case http.StatusNotAcceptable:
		return "Not Acceptable: send the header Accept: application/json, text/event-stream. Nothing was charged."
	case http.StatusUnsupportedMediaType:
		return "Unsupported Media Type: send the body as Content-Type: application/json. Nothing was charged."
	default:
		return fmt.Sprintf("The MCP request was refused (HTTP %d). Nothing was charged.", status)
	}
}
