package rest

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
)

// The transparency log's routes (issue #23), served only when the store
// keeps a log (bbolt) and a log key is given: see [Service.WithLog].
const (
	routeLogCheckpoint = "GET /log/checkpoint"
	routeLogTile       = "GET /log/tile/{path...}"
	routeLogProof      = "GET /log/proof/{verification_id}"
	routeLogReceipts   = "GET /log/receipts/{path...}"
)

// LogIndexHeader is the REST verify answer's header carrying the stored
// receipt's record index in the transparency log (the MCP result's
// _meta carries it as MetaLogIndex). It is set only when the transparency
// log is served, and outside the signed answer.
const LogIndexHeader = "Log-Index"

// Cache lifetimes of the log's documents: a full tile or entry bundle
// never changes; a checkpoint and a partial tile are replaced as the log
// grows.
const (
	cacheImmutable  = "public, max-age=31536000, immutable"
	cacheCheckpoint = "public, max-age=5"
)

// LogOrigin is the log's origin line (and its key's name) for the public
// URL base: the URL without its scheme, then "/log", e.g.
// "verifier.example/log".
func LogOrigin(base string) string {
	base = strings.TrimSuffix(base, "/")
	if _, rest, ok := strings.Cut(base, "://"); ok {
		base = rest
	}
	return base + "/log"
}

// WithLog serves the transparency log of s.Store, signed by key, in opts'
// routes and publishes key in the agent card. It does nothing when key is
// nil or the store keeps no log.
func WithLog(svc *tools.Service, opts *HTTPOptions, key *signing.LogKey) {
	s := httpService{svc}
	l, ok := store.LogOf(s.Store)
	if key == nil || !ok {
		return
	}
	s.LogKey = key
	opts.Routes = append(opts.Routes,
		HTTPRoute{Pattern: routeLogCheckpoint, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.logCheckpoint(w, r, l)
		}), Operation: []byte(logCheckpointOperation)},
		HTTPRoute{Pattern: routeLogTile, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.logTile(w, r, l)
		}), Operation: []byte(logTileOperation)},
		HTTPRoute{Pattern: routeLogProof, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.logProof(w, r, l)
		}), Operation: []byte(logProofOperation)},
		HTTPRoute{Pattern: routeLogReceipts, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.logReceipts(w, r, l)
		}), Operation: []byte(logReceiptsOperation)},
	)
}

// logFault answers a store failure behind a log route: 503, the cause
// logged, never its text.
func (s httpService) logFault(w http.ResponseWriter, r *http.Request, err error) {
	s.Logger().Error("reading the transparency log", "correlation_id", w.Header().Get(CorrelationHeader), "path", r.URL.Path, "err", err)
	writeError(w, tools.NewError(tools.CodeUnavailable, http.StatusServiceUnavailable,
		"The transparency log could not be read just now. Retry in a few seconds.").WithRetryAfter(5))
}

// writeLogDocument writes a log document (checkpoint text or tile bytes).
func writeLogDocument(w http.ResponseWriter, contentType, cache string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// signedCheckpoint reads the log's tree and signs its checkpoint.
func (s httpService) signedCheckpoint(r *http.Request, l store.Log) (store.LogTree, []byte, error) {
	tree, err := l.LogTree(r.Context())
	if err != nil {
		return store.LogTree{}, nil, err
	}
	cp, err := s.LogKey.Checkpoint(tree.Size, tree.Hash)
	return tree, cp, err
}

// logCheckpoint serves GET /log/checkpoint: the C2SP tlog-checkpoint of
// the current tree as a signed note.
func (s httpService) logCheckpoint(w http.ResponseWriter, r *http.Request, l store.Log) {
	_, cp, err := s.signedCheckpoint(r, l)
	if err != nil {
		s.logFault(w, r, err)
		return
	}
	writeLogDocument(w, "text/plain; charset=utf-8", cacheCheckpoint, cp)
}

// logTileNotFound is the 404 of a tile path that is malformed or beyond
// the current tree.
var logTileNotFound = tools.NewError(tools.CodeNotFound, http.StatusNotFound,
	"No such tile in this log yet. Paths are C2SP tlog-tiles ones, /log/tile/<L>/<N>[.p/<W>] and /log/tile/entries/<N>[.p/<W>] "+
		"(also /log/tile/8/<L>/<N> as the Go checksum database writes them); read /log/checkpoint for the tree size.")

// parseLogTilePath parses the path under /log/tile/: a C2SP tlog-tiles
// path ("<L>/<N>[.p/<W>]" or "entries/<N>[.p/<W>]") or the Go checksum
// database's form with the height ("8/<L>/<N>[.p/<W>]"). An entry
// bundle comes back with L = -1.
func parseLogTilePath(path string) (tlog.Tile, bool) {
	if rest, ok := strings.CutPrefix(path, "entries/"); ok {
		return parseLogBundlePath(rest)
	}
	if t, err := tlog.ParseTilePath("tile/" + path); err == nil && t.L >= 0 {
		return t, t.H == store.TileHeight
	}
	t, err := tlog.ParseTilePath("tile/8/" + path)
	return t, err == nil && t.L >= 0
}

// logTile serves GET /log/tile/…: a tile's hashes, or an entry bundle (each
// entry — store.LogEntry of a stored receipt — after its 2-byte big-endian
// length). A full tile or bundle is immutable.
func (s httpService) logTile(w http.ResponseWriter, r *http.Request, l store.Log) {
	t, ok := parseLogTilePath(r.PathValue("path"))
	if !ok {
		writeError(w, logTileNotFound)
		return
	}
	var data []byte
	var err error
	if t.L == -1 {
		data, err = l.LogEntries(r.Context(), t.N, t.W)
	} else {
		data, err = l.LogTile(r.Context(), t)
	}
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, logTileNotFound)
		return
	}
	if err != nil {
		s.logFault(w, r, err)
		return
	}
	cache := cacheImmutable
	if t.W < 1<<store.TileHeight {
		cache = cacheCheckpoint
	}
	writeLogDocument(w, "application/octet-stream", cache, data)
}

// logReceiptsNotFound is the 404 of a receipts bundle path that is
// malformed or beyond the current tree.
var logReceiptsNotFound = tools.NewError(tools.CodeNotFound, http.StatusNotFound,
	"No such receipts bundle in this log yet. The path is /log/receipts/<N>[.p/<W>], as an entry bundle's: records N·256 to N·256+W-1 "+
		"(W = 256 when absent); read /log/checkpoint for the tree size.")

// parseLogBundlePath parses "<N>[.p/<W>]", the path of an entry or
// receipts bundle under its folder, as the tile of the entries.
func parseLogBundlePath(path string) (tlog.Tile, bool) {
	t, err := tlog.ParseTilePath("tile/8/data/" + path)
	return t, err == nil
}

// logReceipts serves GET /log/receipts/<N>[.p/<W>]: a JSON array of the
// stored compact receipts of records N·256 … N·256+W-1, byte for byte, in
// log order, so an auditor can map every entry of the entry bundle at
// the same path to its receipt. A full bundle is immutable.
func (s httpService) logReceipts(w http.ResponseWriter, r *http.Request, l store.Log) {
	t, ok := parseLogBundlePath(r.PathValue("path"))
	if !ok {
		writeError(w, logReceiptsNotFound)
		return
	}
	receipts, err := l.LogReceipts(r.Context(), t.N<<store.TileHeight, t.W)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidArgument) {
		writeError(w, logReceiptsNotFound)
		return
	}
	if err != nil {
		s.logFault(w, r, err)
		return
	}
	size := 2
	for _, rc := range receipts {
		size += len(rc) + 1
	}
	body := make([]byte, 0, size)
	body = append(body, '[')
	for i, rc := range receipts {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, rc...)
	}
	body = append(body, ']')
	cache := cacheImmutable
	if t.W < 1<<store.TileHeight {
		cache = cacheCheckpoint
	}
	writeLogDocument(w, "application/json", cache, body)
}

// logProof serves GET /log/proof/{verification_id}. The checkpoint is
// signed over the tree the proof was made in, read in one transaction.
func (s httpService) logProof(w http.ResponseWriter, r *http.Request, l store.Log) {
	id := r.PathValue("verification_id")
	inc, err := l.LogInclusion(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, tools.NewError(tools.CodeNotFound, http.StatusNotFound,
			"No receipt was logged under this verification id by this service; check the verification_id of the receipt."))
		return
	}
	var cp []byte
	if err == nil {
		cp, err = s.LogKey.Checkpoint(inc.Tree.Size, inc.Tree.Hash)
	}
	if err != nil {
		s.logFault(w, r, err)
		return
	}
	out := tools.LogProof{VerificationID: id, LogIndex: inc.Index, Entry: base64.StdEncoding.EncodeToString(inc.Entry[:]),
		TreeSize: inc.Tree.Size, InclusionProof: make([]string, len(inc.Proof)), Checkpoint: string(cp)}
	for i, h := range inc.Proof {
		out.InclusionProof[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	body, err := ijson.Marshal(out)
	if err != nil {
		s.logFault(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// The log routes' OpenAPI operations.
const (
	logCheckpointOperation = `{"tags":["log"],"operationId":"getLogCheckpoint","summary":"The transparency log's signed checkpoint",` +
		`"description":"A C2SP tlog-checkpoint (origin, tree size, base64 RFC 6962 root hash) as a C2SP signed note, signed by the log key the agent card publishes.",` +
		`"security":[],"responses":{"200":{"description":"The checkpoint.","content":{"text/plain":{"schema":{"type":"string"}}}},` +
		`"default":{"$ref":"#/components/responses/Error"}}}`
	logTileOperation = `{"tags":["log"],"operationId":"getLogTile","summary":"A tile or entry bundle of the transparency log",` +
		`"description":"C2SP tlog-tiles: <L>/<N>[.p/<W>] is a tile of RFC 6962 hashes, entries/<N>[.p/<W>] a bundle of entries, each the SHA-256 of a stored receipt's RFC 8785 form after a 2-byte big-endian length. Full tiles are immutable.",` +
		`"security":[],"parameters":[{"name":"path","in":"path","required":true,"schema":{"type":"string"}}],` +
		`"responses":{"200":{"description":"The tile.","content":{"application/octet-stream":{"schema":{"type":"string","format":"binary"}}}},` +
		`"default":{"$ref":"#/components/responses/Error"}}}`
	logProofOperation = `{"tags":["log"],"operationId":"getLogProof","summary":"A receipt's place in the transparency log",` +
		`"description":"The receipt's log index, its entry, an RFC 6962 inclusion proof and the signed checkpoint it is proved against.",` +
		`"security":[],"parameters":[{"name":"verification_id","in":"path","required":true,"schema":{"type":"string"}}],` +
		`"responses":{"200":{"description":"The inclusion proof.","content":{"application/json":{"schema":{"type":"object"}}}},` +
		`"default":{"$ref":"#/components/responses/Error"}}}`
	logReceiptsOperation = `{"tags":["log"],"operationId":"getLogReceipts","summary":"The stored receipts of a run of log records",` +
		`"description":"<N>[.p/<W>] as an entry bundle's path: a JSON array of the stored compact receipts of records N·256 to N·256+W-1 (W = 256 when absent), byte for byte, in log order; record i's entry is the SHA-256 of receipt i's RFC 8785 form. verifier log audit maps every entry to its receipt with these. Full bundles are immutable.",` +
		`"security":[],"parameters":[{"name":"path","in":"path","required":true,"schema":{"type":"string"}}],` +
		`"responses":{"200":{"description":"The receipts.","content":{"application/json":{"schema":{"type":"array","items":{"type":"object"}}}}},` +
		`"default":{"$ref":"#/components/responses/Error"}}}`
)
