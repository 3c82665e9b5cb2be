package rest

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/tools"
)

// statusWriter records what a handler wrote, for the request log and for
// the recovery of a panic (a 500 only when nothing was written yet).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
	shed   bool // the answer is the Limiter's 503: load shedding
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote && code >= 200 {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers (MCP's SSE) flush through the wrapper.
func (w *statusWriter) Flush() {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) statusCode() int {
	if !w.wrote {
		return http.StatusOK
	}
	return w.status
}

// headerCapture records the status and headers the mux would answer an
// unmatched request with, and drops its plain-text body.
type headerCapture struct {
	header http.Header
	status int
}

func (c *headerCapture) Header() http.Header { return c.header }
func (c *headerCapture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *headerCapture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return len(p), nil
}

func newCorrelationID() string { return uuid.NewString() }

func stack() string { return string(debug.Stack()) }

// writeJSON writes a JSON body that is never cached.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError writes e in the one error shape. An internal error carries the
// response's correlation id and nothing else of what went wrong.
func writeError(w http.ResponseWriter, e *tools.Error) {
	if e.Status == http.StatusInternalServerError {
		c := *e
		c.CorrelationID = w.Header().Get(CorrelationHeader)
		e = &c
	}
	if e.RetryAfter != nil {
		w.Header().Set("Retry-After", strconv.Itoa(*e.RetryAfter))
	}
	body, err := ijson.Marshal(e)
	if err != nil {
		body = []byte(`{"code":"internal_error","status":500,"retryable":false,"charged":false,"message":"The verifier hit an internal fault.","next_actions":[{"action":"report_fault"}]}`)
		e = &tools.Error{Status: http.StatusInternalServerError}
	}
	writeJSON(w, e.Status, body)
}

// fail writes err in the error shape; an error that is not an *Error (an
// internal fault) is logged with the correlation id first.
func (h *HTTPHandler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if sw, ok := w.(*statusWriter); ok && tools.IsBusy(err) {
		sw.shed = true
	}
	var e *tools.Error
	if !errors.As(err, &e) {
		e = tools.AsError(err)
		if e.Status == http.StatusInternalServerError {
			h.log.Error("internal fault", "correlation_id", w.Header().Get(CorrelationHeader), "route", routeOf(r), "err", err)
		}
	}
	writeError(w, e)
}

// fieldError is a 422 for one field of a URL (path value or query).
func fieldError(field, problem, fix string) *tools.Error {
	return tools.InvalidRequest([]engine.FieldProblem{{Field: field, Problem: problem, Fix: fix}})
}

// checkJSONContentType accepts application/json with no charset or UTF-8.
func checkJSONContentType(r *http.Request) *tools.Error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/json" {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	e := tools.NewError(tools.CodeUnsupportedMediaType, http.StatusUnsupportedMediaType,
		"The request body must be JSON sent with the header Content-Type: application/json (UTF-8). Nothing was charged; set the header and send it again.")
	e.NextActions[0].Action = "set_content_type"
	return e
}

// tooLarge is the 413 that states the limit.
func tooLarge(limit int64) *tools.Error {
	size := fmt.Sprintf("%d bytes", limit)
	if h := humanBytes(limit); h != size {
		size += " (" + h + ")"
	}
	e := tools.NewError(tools.CodePayloadTooLarge, http.StatusRequestEntityTooLarge,
		fmt.Sprintf("The request body is larger than this server's limit of %s. Nothing was charged; send a smaller request.", size))
	e.NextActions[0].Action = "reduce_request_size"
	return e
}

// readBody reads the whole body, at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *tools.Error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	body, err := readAllSized(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge(limit)
	case err != nil:
		return nil, fieldError("body", "could not be read completely", "Send the whole request body, with a correct Content-Length.")
	}
	return body, nil
}

// readAllSized is io.ReadAll for a body of a declared size (negative:
// unknown): one buffer of that size, one byte more to see the end without
// growing, instead of growing from 512 bytes.
func readAllSized(rd io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(rd)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // longer than declared: let append grow it
			b = append(b, 0)[:len(b)]
		}
	}
}

// humanBytes writes n as KiB or MiB when it is a whole number of them.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
