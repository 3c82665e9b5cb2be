package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// The check names of a log audit (verifier log audit), in the order they
// run. A failed check ends the audit.
const (
	CheckAuditCard         = "card"            // the agent card gives the receipt keys and the log key
	CheckAuditRecord       = "record"          // the trust record (--agent) is signed by a card key
	CheckAuditCheckpoint   = "log_checkpoint"  // the checkpoint is a note the log key signed
	CheckAuditLogKey       = "log_key"         // the log key is the one last audited under its origin
	CheckAuditTruncation   = "log_truncation"  // the tree is not smaller than the one last audited
	CheckAuditFork         = "log_fork"        // a tree of the last audited size has its root
	CheckAuditConsistency  = "log_consistency" // the tiles prove the last audited tree a prefix of this one
	CheckAuditTiles        = "log_tiles"       // every tile read hashes up to the checkpoint's root
	CheckAuditEntries      = "log_entries"     // every entry bundle holds the records the tiles hash
	CheckAuditReceipts     = "log_receipts"    // every record's receipt hashes to its entry and is signed by a card key
	CheckAuditRecordLog    = "record_log"      // the record's checkpoint is a prefix of the audited tree
	CheckAuditRecordScore  = "record_score"    // replaying the agent's logged verdicts gives the record's numbers
	CheckAuditRecordRecent = "record_recent"   // the record's recent verdicts are logged verdicts of the agent
)

// Bounds of what an audit downloads from a server that may be hostile.
const (
	// DefaultAuditMaxRecords is the largest log an audit reads unless told
	// otherwise (AuditOptions.MaxRecords).
	DefaultAuditMaxRecords = 1 << 22
	MaxAuditCheckpoint     = 16 << 10
	MaxAuditCard           = 1 << 20
	maxAuditRecord         = 1 << 20
	maxAuditTile           = (1 << store.TileHeight) * tlog.HashSize
	maxAuditEntries        = (1 << store.TileHeight) * (2 + 64)
	MaxAuditReceipts       = 16 << 20
	auditRequestTimeout    = 30 * time.Second
)

// AuditState is what an audit keeps between runs: the last checkpoint it
// audited, to which the next one must be consistent.
type AuditState struct {
	Origin   string `json:"origin"`
	TreeSize int64  `json:"tree_size"`
	RootHash string `json:"root_hash"` // standard base64
	// Checkpoint is the signed note as served, kept as evidence.
	Checkpoint string `json:"checkpoint"`
	// VerifierKey is the log key the checkpoint verified under (note
	// verifier key format): a later audit of the origin under another key
	// fails. Empty in a state saved before it was kept.
	VerifierKey string `json:"verifier_key,omitempty"`
}

// AuditOptions says what to audit.
type AuditOptions struct {
	// BaseURL is the service's public URL (its agent card is at
	// /.well-known/agent-card.json, its log under /log/).
	BaseURL string
	// AgentID, when not "", also audits the agent's signed trust record.
	AgentID string
	// LogKey is the log's note verifier key; "" takes the card's.
	LogKey string
	// Previous returns the last audited checkpoint of the log origin (the
	// log key's name), nil when there is none; a nil Previous has none.
	Previous func(origin string) (*AuditState, error)
	// MaxRecords refuses a larger log; 0 means DefaultAuditMaxRecords.
	MaxRecords int64
	// Client makes the requests; nil uses a client with a 30 s timeout.
	Client *http.Client
}

// AuditReport is the outcome of an audit: one check per step up to the
// first that failed. State is the audited checkpoint, to keep for the next
// audit only when OK.
type AuditReport struct {
	OK     bool            `json:"ok"`
	Checks []signing.Check `json:"checks"`
	State  *AuditState     `json:"state,omitempty"`
}

// errAuditFailed ends an audit at a failed check (already recorded).
var errAuditFailed = errors.New("audit failed")

// auditor runs one audit.
type auditor struct {
	ctx      context.Context
	opts     AuditOptions
	client   *http.Client
	report   *AuditReport
	keys     signing.Keys
	verifier note.Verifier
	vkey     string // the log's note verifier key
	tiles    *auditTiles
	tree     tlog.Tree
	record   *TrustRecord
	replay   auditReplay
}

// auditReplay is what the receipts of the audited agent add up to.
type auditReplay struct {
	tally   store.ScoreTally
	results map[string]string // verification id → result, of the agent's logged verdicts
}

// AuditLog audits the transparency log of the service at opts.BaseURL
// and, with opts.AgentID, the agent's trust record against it: the
// checkpoint is signed by the log key and consistent with opts.Previous
// (not truncated, not forked, proved a prefix by the tiles); every tile,
// entry and receipt of the tree is authenticated up to the checkpoint's
// root; every receipt is signed by a key the card publishes; and the
// record's numbers are those that replaying the agent's logged verdicts
// gives. The report is never nil.
func AuditLog(ctx context.Context, opts AuditOptions) *AuditReport {
	a := &auditor{ctx: ctx, opts: opts, client: opts.Client, report: &AuditReport{Checks: []signing.Check{}}}
	if a.client == nil {
		a.client = &http.Client{Timeout: auditRequestTimeout}
	}
	if a.opts.MaxRecords <= 0 {
		a.opts.MaxRecords = DefaultAuditMaxRecords
	}
	a.opts.BaseURL = strings.TrimSuffix(a.opts.BaseURL, "/")
	steps := []func() error{a.readCard, a.readRecord, a.readCheckpoint, a.checkConsistency, a.checkRecords, a.checkRecord}
	for _, step := range steps {
		if err := step(); err != nil {
			return a.report
		}
	}
	a.report.OK = true
	return a.report
}

func (a *auditor) pass(name, format string, args ...any) {
	a.report.Checks = append(a.report.Checks, signing.Check{Name: name, OK: true, Detail: fmt.Sprintf(format, args...)})
}

func (a *auditor) fail(name, format string, args ...any) error {
	a.report.Checks = append(a.report.Checks, signing.Check{Name: name, Detail: fmt.Sprintf(format, args...)})
	return errAuditFailed
}

// get fetches path under the base URL, at most limit bytes.
func (a *auditor) get(path string, limit int64) ([]byte, error) {
	return FetchBounded(a.ctx, a.client, a.opts.BaseURL+path, limit)
}

// FetchBounded GETs target with client: only a 200 answer of at most limit
// bytes is returned, read no further than limit+1 bytes, so a hostile
// server cannot make the caller read without end.
func FetchBounded(ctx context.Context, client *http.Client, target string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", target, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: HTTP %d", target, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", target, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("fetching %s: over %d bytes", target, limit)
	}
	return body, nil
}

// readCard reads the receipt keys and the log key from the agent card.
func (a *auditor) readCard() error {
	card, err := a.get("/.well-known/agent-card.json", MaxAuditCard)
	if err != nil {
		return a.fail(CheckAuditCard, "%v", err)
	}
	if a.keys, err = signing.KeysFromAgentCard(card); err != nil {
		return a.fail(CheckAuditCard, "the card publishes no receipt keys: %v", err)
	}
	vkey := a.opts.LogKey
	if vkey == "" {
		vkey = LogVerifierKey(card)
	}
	if vkey == "" {
		return a.fail(CheckAuditCard, "the card names no transparency log (params.transparencyLog) and no --log-key was given")
	}
	if a.verifier, err = note.NewVerifier(vkey); err != nil {
		return a.fail(CheckAuditCard, "the log key is not a note verifier key (<name>+<hash>+<base64>)")
	}
	a.vkey = vkey
	a.pass(CheckAuditCard, "%d receipt key(s), log %s", len(a.keys), a.verifier.Name())
	return nil
}

// readRecord fetches the agent's signed trust record, before the
// checkpoint, so that the checkpoint's tree is at least the record's.
func (a *auditor) readRecord() error {
	if a.opts.AgentID == "" {
		return nil
	}
	body, err := a.get("/score/"+url.PathEscape(a.opts.AgentID), maxAuditRecord)
	if err != nil {
		return a.fail(CheckAuditRecord, "%v (a service that charges for records answers 402: audit without --agent, or fetch the record paid)", err)
	}
	report, err := signing.VerifyReceipt(body, a.keys)
	if err != nil || report.Context != signing.ContextTrustScore {
		return a.fail(CheckAuditRecord, "the trust record's signature does not verify under a key of the card as a trust-score record")
	}
	var rec TrustRecord
	if err := json.Unmarshal(body, &rec); err != nil || rec.AgentID != a.opts.AgentID {
		return a.fail(CheckAuditRecord, "the trust record is not one of agent %q", a.opts.AgentID)
	}
	if rec.Log == nil {
		return a.fail(CheckAuditRecord, "the trust record names no log checkpoint (no \"log\" member), so it cannot be audited")
	}
	a.record = &rec
	a.pass(CheckAuditRecord, "signed by key %s, computed from the first %d records", report.KeyVersion, rec.Log.TreeSize)
	return nil
}

// readCheckpoint fetches and opens the log's checkpoint.
func (a *auditor) readCheckpoint() error {
	text, err := a.get("/log/checkpoint", MaxAuditCheckpoint)
	if err != nil {
		return a.fail(CheckAuditCheckpoint, "%v", err)
	}
	signed, err := note.Open(text, note.VerifierList(a.verifier))
	if err != nil {
		return a.fail(CheckAuditCheckpoint, "the checkpoint is not a note signed by the log key %s", a.verifier.Name())
	}
	size, root, ok := parseCheckpoint(signed.Text, a.verifier.Name())
	if !ok {
		return a.fail(CheckAuditCheckpoint, "the checkpoint is not a C2SP tlog-checkpoint of the log %s", a.verifier.Name())
	}
	if size > a.opts.MaxRecords {
		return a.fail(CheckAuditCheckpoint, "the tree has %d records, more than the %d an audit reads (--max-records)", size, a.opts.MaxRecords)
	}
	a.tree = tlog.Tree{N: size, Hash: root}
	a.tiles = &auditTiles{a: a, saved: map[tlog.Tile][]byte{}}
	a.report.State = &AuditState{Origin: a.verifier.Name(), TreeSize: size,
		RootHash: base64.StdEncoding.EncodeToString(root[:]), Checkpoint: string(text), VerifierKey: a.vkey}
	a.pass(CheckAuditCheckpoint, "signed by %s, tree size %d", a.verifier.Name(), size)
	return nil
}

// hashReader reads the tree's hashes from its tiles, each checked against
// the checkpoint's root.
func (a *auditor) hashReader() tlog.HashReader {
	return tlog.TileHashReader(a.tree, a.tiles)
}

// checkConsistency compares the checkpoint with the last one audited.
func (a *auditor) checkConsistency() error {
	var prev *AuditState
	if a.opts.Previous != nil {
		var err error
		if prev, err = a.opts.Previous(a.verifier.Name()); err != nil {
			return a.fail(CheckAuditConsistency, "the last audited checkpoint cannot be read: %v", err)
		}
	}
	if prev == nil {
		a.pass(CheckAuditConsistency, "first audit of this log: nothing saved to compare with")
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(prev.RootHash)
	if err != nil || len(raw) != tlog.HashSize || prev.TreeSize < 0 || prev.Origin != a.verifier.Name() {
		return a.fail(CheckAuditConsistency, "the saved state is not a checkpoint of the log %s", a.verifier.Name())
	}
	// One origin is one log, signed by one key: a checkpoint of the origin
	// under another key is another log, or the log's key in other hands,
	// whatever its tree says.
	if prev.VerifierKey != "" && prev.VerifierKey != a.vkey {
		return a.fail(CheckAuditLogKey, "the log %s is now signed by another key (%s) than the one audited before (%s): a log's key never changes under its origin",
			a.verifier.Name(), noteKeyFingerprint(a.vkey), noteKeyFingerprint(prev.VerifierKey))
	}
	if prev.VerifierKey != "" {
		a.pass(CheckAuditLogKey, "the log key audited before")
	}
	var prevRoot tlog.Hash
	copy(prevRoot[:], raw)
	if a.tree.N < prev.TreeSize {
		return a.fail(CheckAuditTruncation, "the log was truncated: its tree has %d records, the one audited before had %d", a.tree.N, prev.TreeSize)
	}
	a.pass(CheckAuditTruncation, "%d records, at least the %d audited before", a.tree.N, prev.TreeSize)
	if a.tree.N == prev.TreeSize {
		if a.tree.Hash != prevRoot {
			return a.fail(CheckAuditFork, "the log forked: a tree of %d records with root %s, the one audited before had root %s",
				a.tree.N, base64.StdEncoding.EncodeToString(a.tree.Hash[:]), prev.RootHash)
		}
		a.pass(CheckAuditFork, "the same tree as audited before")
		return nil
	}
	a.pass(CheckAuditFork, "a larger tree than audited before")
	proof, err := tlog.ProveTree(a.tree.N, prev.TreeSize, a.hashReader())
	if err == nil {
		err = tlog.CheckTree(proof, a.tree.N, a.tree.Hash, prev.TreeSize, prevRoot)
	}
	if err != nil {
		return a.fail(CheckAuditConsistency, "the tiles do not prove the tree of %d records audited before a prefix of this one: the log was rewritten", prev.TreeSize)
	}
	a.pass(CheckAuditConsistency, "the tree of %d records audited before is a prefix of this one", prev.TreeSize)
	return nil
}

// noteKeyFingerprint names a note verifier key in messages: its key hash
// and the fingerprint of its public key, never the whole of a string a
// server or a state file gave.
func noteKeyFingerprint(vkey string) string {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return "a malformed key"
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < 1 {
		return "a malformed key"
	}
	return "fingerprint " + signing.Fingerprint(raw[1:])
}

// checkRecords reads every record of the tree, a bundle of up to 256 at a
// time: its leaf hash from the tiles, its entry, and its receipt.
func (a *auditor) checkRecords() error {
	a.replay.results = map[string]string{}
	replayed := int64(-1) // records replayed for the agent: the record's tree size
	if a.record != nil {
		if a.record.Log.TreeSize > a.tree.N || a.record.Log.TreeSize < 0 {
			return a.fail(CheckAuditRecordLog, "the record was computed from %d records, more than the checkpoint's %d", a.record.Log.TreeSize, a.tree.N)
		}
		replayed = a.record.Log.TreeSize
	}
	const bundle = 1 << store.TileHeight
	for first := int64(0); first < a.tree.N; first += bundle {
		width := int(min(bundle, a.tree.N-first))
		leaves, err := a.leafHashes(first, width)
		if err != nil {
			return a.fail(CheckAuditTiles, "records %d–%d: %v", first, first+int64(width)-1, err)
		}
		entries, err := a.entryBundle(first, width)
		if err != nil {
			return a.fail(CheckAuditEntries, "records %d–%d: %v", first, first+int64(width)-1, err)
		}
		for i, e := range entries {
			if tlog.RecordHash(e) != leaves[i] {
				return a.fail(CheckAuditEntries, "record %d: the entry bundle's entry is not the one the tree holds", first+int64(i))
			}
		}
		receipts, err := a.receiptBundle(first, width)
		if err != nil {
			return a.fail(CheckAuditReceipts, "records %d–%d: %v", first, first+int64(width)-1, err)
		}
		for i, r := range receipts {
			index := first + int64(i)
			if err := a.checkReceipt(index, r, entries[i], index < replayed); err != nil {
				return err
			}
		}
	}
	if a.tree.N > 0 {
		a.pass(CheckAuditTiles, "every tile of the %d records hashes up to the checkpoint's root", a.tree.N)
		a.pass(CheckAuditEntries, "every entry is the one the tree holds")
	}
	a.pass(CheckAuditReceipts, "%d receipt(s), each the SHA-256 preimage of its entry and signed by a key of the card", a.tree.N)
	return nil
}

// leafHashes reads the RFC 6962 leaf hashes of records first …
// first+width-1 from the tiles.
func (a *auditor) leafHashes(first int64, width int) ([]tlog.Hash, error) {
	indexes := make([]int64, width)
	for i := range indexes {
		indexes[i] = tlog.StoredHashIndex(0, first+int64(i))
	}
	hashes, err := a.hashReader().ReadHashes(indexes)
	if err != nil {
		return nil, fmt.Errorf("the tiles do not hash up to the checkpoint's root (%v)", err)
	}
	return hashes, nil
}

// bundlePath is the path of the bundle of records first … first+width-1
// (first a multiple of 256) under /log/tile/entries/ or /log/receipts/.
func bundlePath(first int64, width int) string {
	t := tlog.Tile{H: store.TileHeight, L: -1, N: first >> store.TileHeight, W: width}
	return strings.TrimPrefix(t.Path(), "tile/8/data/")
}

// entryBundle fetches and splits an entry bundle.
func (a *auditor) entryBundle(first int64, width int) ([][]byte, error) {
	data, err := a.get("/log/tile/entries/"+bundlePath(first, width), maxAuditEntries)
	if err != nil {
		return nil, err
	}
	entries := make([][]byte, 0, width)
	for len(data) > 0 && len(entries) < width {
		if len(data) < 2 || len(data) < 2+int(binary.BigEndian.Uint16(data)) {
			return nil, errors.New("the entry bundle is cut short")
		}
		n := 2 + int(binary.BigEndian.Uint16(data))
		entries = append(entries, data[2:n])
		data = data[n:]
	}
	if len(entries) != width || len(data) != 0 {
		return nil, fmt.Errorf("the entry bundle does not hold exactly %d entries", width)
	}
	return entries, nil
}

// receiptBundle fetches a bundle of receipts.
func (a *auditor) receiptBundle(first int64, width int) ([]json.RawMessage, error) {
	data, err := a.get("/log/receipts/"+bundlePath(first, width), MaxAuditReceipts)
	if err != nil {
		return nil, err
	}
	var receipts []json.RawMessage
	if err := json.Unmarshal(data, &receipts); err != nil {
		return nil, errors.New("the receipts bundle is not a JSON array")
	}
	if len(receipts) != width {
		return nil, fmt.Errorf("the receipts bundle holds %d receipts for %d records: a verdict is hidden or added", len(receipts), width)
	}
	return receipts, nil
}

// loggedReceipt is what a log audit reads from a receipt.
type loggedReceipt struct {
	VerificationID string  `json:"verification_id"`
	AgentID        *string `json:"agent_id"`
	Result         string  `json:"result"`
	VerifiedAt     string  `json:"verified_at"`
}

// checkReceipt checks record index's receipt against its entry and its
// signature and, when count, adds it to the agent's replay.
func (a *auditor) checkReceipt(index int64, receipt json.RawMessage, entry []byte, count bool) error {
	sum, err := store.LogEntry(receipt)
	if err != nil || !bytes.Equal(sum[:], entry) {
		return a.fail(CheckAuditReceipts, "record %d: the receipt served for it does not hash to its entry: a verdict is hidden, swapped or changed", index)
	}
	report, err := signing.VerifyReceipt(receipt, a.keys)
	if err != nil || report.Context != signing.ContextVerify {
		return a.fail(CheckAuditReceipts, "record %d: the receipt's signature does not verify under a key of the card", index)
	}
	if a.record == nil {
		return nil
	}
	var r loggedReceipt
	if err := json.Unmarshal(receipt, &r); err != nil || r.Result != store.ResultPass && r.Result != store.ResultFail {
		return a.fail(CheckAuditReceipts, "record %d: the receipt has no pass or fail result", index)
	}
	if !count || r.AgentID == nil || *r.AgentID != a.opts.AgentID || store.IsTestAgent(a.opts.AgentID) {
		return nil
	}
	at, err := time.Parse(engine.VerifiedAtLayout, r.VerifiedAt)
	if err != nil {
		return a.fail(CheckAuditReceipts, "record %d: the receipt's verified_at is not a time", index)
	}
	a.replay.tally.Add(at, r.Result == store.ResultPass)
	a.replay.results[r.VerificationID] = r.Result
	return nil
}

// checkRecord checks the trust record against the audited tree and the
// replayed verdicts.
func (a *auditor) checkRecord() error {
	rec := a.record
	if rec == nil {
		return nil
	}
	root, err := tlog.TreeHash(rec.Log.TreeSize, a.hashReader())
	if err != nil {
		return a.fail(CheckAuditRecordLog, "the tiles do not give the root of the record's tree (%v)", err)
	}
	if rec.Log.Origin != a.verifier.Name() || rec.Log.RootHash != base64.StdEncoding.EncodeToString(root[:]) {
		return a.fail(CheckAuditRecordLog, "the record's checkpoint (%d records, root %s) is not a prefix of the audited log: the record was computed from another history",
			rec.Log.TreeSize, rec.Log.RootHash)
	}
	a.pass(CheckAuditRecordLog, "the record's tree of %d records is a prefix of the audited one", rec.Log.TreeSize)

	at, err := time.Parse(engine.VerifiedAtLayout, rec.Inputs.EvaluatedAt)
	if err != nil {
		return a.fail(CheckAuditRecordScore, "the record's inputs.evaluated_at is not a time")
	}
	want := NewTrustRecord(a.replay.tally.Score(rec.AgentID, at), at)
	if diff := recordDiff(rec, want); diff != "" {
		return a.fail(CheckAuditRecordScore, "replaying the agent's %d logged verdict(s) gives another record: %s", want.Inputs.Total, diff)
	}
	a.pass(CheckAuditRecordScore, "%d verdict(s), %d passed: score %.6g, interval [%.6g, %.6g], as signed", want.Inputs.Total, want.Inputs.Passed,
		want.Score, want.Interval.Lower, want.Interval.Upper)

	for _, v := range rec.RecentVerdicts {
		if a.replay.results[v.VerificationID] != v.Result {
			return a.fail(CheckAuditRecordRecent, "recent verdict %s (%s) is not a logged verdict of the agent among the record's records", v.VerificationID, v.Result)
		}
	}
	a.pass(CheckAuditRecordRecent, "its %d recent verdict(s) are logged verdicts of the agent", len(rec.RecentVerdicts))
	return nil
}

// recordDiff lists the numbers of the signed record got that differ from
// the replayed want, compared at the record's decimals; "" when none do.
func recordDiff(got, want *TrustRecord) string {
	var diffs []string
	num := func(name string, g, w float64) {
		if math.Abs(g-w) > 1.5/scoreDecimals {
			diffs = append(diffs, fmt.Sprintf("%s %v, replayed %v", name, g, w))
		}
	}
	str := func(name string, g, w *string) {
		if (g == nil) != (w == nil) || g != nil && *g != *w {
			diffs = append(diffs, fmt.Sprintf("%s %s, replayed %s", name, strOrNull(g), strOrNull(w)))
		}
	}
	if got.HasHistory != want.HasHistory {
		diffs = append(diffs, fmt.Sprintf("has_history %v, replayed %v", got.HasHistory, want.HasHistory))
	}
	gi, wi := got.Inputs, want.Inputs
	for _, n := range []struct {
		name string
		g, w int
	}{{"total", gi.Total, wi.Total}, {"passed", gi.Passed, wi.Passed}, {"failed", gi.Failed, wi.Failed}} {
		if n.g != n.w {
			diffs = append(diffs, fmt.Sprintf("%s %d, replayed %d", n.name, n.g, n.w))
		}
	}
	num("score", got.Score, want.Score)
	num("interval.lower", got.Interval.Lower, want.Interval.Lower)
	num("interval.upper", got.Interval.Upper, want.Interval.Upper)
	num("pass_rate", gi.PassRate, wi.PassRate)
	num("recency_weighted_pass_rate", gi.RecencyWeightedPassRate, wi.RecencyWeightedPassRate)
	num("weighted_passed", gi.WeightedPassed, wi.WeightedPassed)
	num("weighted_failed", gi.WeightedFailed, wi.WeightedFailed)
	num("effective_n", gi.EffectiveN, wi.EffectiveN)
	str("first_seen", gi.FirstSeen, wi.FirstSeen)
	str("last_seen", gi.LastSeen, wi.LastSeen)
	return strings.Join(diffs, "; ")
}

func strOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// auditTiles is a tlog.TileReader over GET /log/tile/…; tlog.TileHashReader
// checks each tile against the checkpoint's root and saves those that
// held, which later reads reuse.
type auditTiles struct {
	a     *auditor
	saved map[tlog.Tile][]byte
}

func (*auditTiles) Height() int { return store.TileHeight }

func (r *auditTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if data, ok := r.saved[t]; ok {
			out[i] = data
			continue
		}
		data, err := r.a.get("/log/tile/"+strings.TrimPrefix(t.Path(), "tile/8/"), maxAuditTile)
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

// SaveTiles keeps the checked tiles above level 0: every bundle's check
// reads them again, while each level-0 tile is read once.
func (r *auditTiles) SaveTiles(tiles []tlog.Tile, data [][]byte) {
	for i, t := range tiles {
		if t.L > 0 {
			r.saved[t] = data[i]
		}
	}
}
