package tools

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
)

// MaxStdioFrame bounds one JSON-RPC frame read over stdio, as the SDK's
// own limit does (mcp.DefaultMaxLineLength).
const MaxStdioFrame = 16 << 20

// JSON-RPC 2.0 error codes of the frames the guards answer themselves.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// frameGuard passes stdio input to the MCP transport one newline-delimited
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
	buf []byte // the rest of the current good frame
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

func (g *frameGuard) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		line, err := g.readLine()
		if len(line) > 0 {
			g.buf = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// readLine returns the next good frame with its newline, or nil after
// answering a bad one (or for a blank line).
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
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, err
		}
		if code, msg := frameProblem(line); code != 0 {
			g.refuse(code, msg)
			return nil, err
		}
		if line[len(line)-1] != '\n' {
			line = append(line, '\n') // the last frame, at end of input
		}
		return line, err
	}
}

// frameProblem says why the SDK could not read a frame, or 0.
func frameProblem(line []byte) (code int, message string) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return rpcParseError, "Parse error: the frame is not one valid JSON value (one message per line, no newlines inside it)."
	}
	if line[0] == '[' {
		// MCP 2025-06-18 dropped batches, and the SDK ends a session of
		// that version or later that receives one.
		return rpcInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted; send one message per line."
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return rpcInvalidRequest, "Invalid Request: the frame is not a JSON-RPC 2.0 request, notification or response."
	}
	return 0, ""
}

// refuse writes a JSON-RPC error with a null id.
func (g *frameGuard) refuse(code int, message string) {
	_, _ = g.out.Write(rpcErrorFrame(code, message))
}

func rpcErrorFrame(code int, message string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.Itoa(code) + `,"message":` + strconv.Quote(message) + "}}\n")
}

// sdkErrorGuard replaces the plain-text error bodies the MCP SDK writes over
// HTTP (http.Error: "malformed payload: unmarshaling jsonrpc message: json:
// invalid character … : }}}", which quotes the request) with a JSON-RPC
// error of a fixed message, keeping the status. Every other response passes
// through untouched.
type sdkErrorGuard struct {
	http.ResponseWriter
	replaced bool
}

func (g *sdkErrorGuard) WriteHeader(code int) {
	h := g.Header()
	if code >= 400 && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		g.replaced = true
		body := rpcErrorFrame(rpcInvalidRequest, sdkErrorMessage(code))
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
	return g.ResponseWriter.Write(p)
}

// Unwrap gives http.ResponseController the underlying writer.
func (g *sdkErrorGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func sdkErrorMessage(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "Invalid Request: the body is not a JSON-RPC 2.0 message (or batch) this server accepts. Nothing was charged."
	case http.StatusNotAcceptable:
		return "Not Acceptable: send the header Accept: application/json, text/event-stream. Nothing was charged."
	case http.StatusUnsupportedMediaType:
		return "Unsupported Media Type: send the body as Content-Type: application/json. Nothing was charged."
	default:
		return fmt.Sprintf("The MCP request was refused (HTTP %d). Nothing was charged.", status)
	}
}
