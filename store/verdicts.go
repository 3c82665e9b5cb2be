package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// recordFormat is the first byte of every value in the verdicts bucket.
const recordFormat = 1

// Verified-at times must lie in this range so that they fit in int64 Unix
// nanoseconds and differences between them do not overflow.
var (
	minVerifiedAt = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxVerifiedAt = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// PutVerdict stores v, its id entry, its agent's counters and its
// time-index entry in one transaction, shared with concurrent writers (a
// group commit), and returns once that transaction is committed and synced.
// Verdicts of test agents (IsTestAgent) and of no agent are stored without
// counters or index.
func (b *Bolt) PutVerdict(ctx context.Context, v Verdict) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := b.records.Get()
	w, err := b.prepareVerdict(*buf, v)
	if err != nil {
		b.records.Put(buf)
		return fmt.Errorf("storing verdict %s: %w", v.VerificationID, err)
	}
	err = b.write(w.apply)
	// bbolt holds a value until its transaction ends; write has returned,
	// so every transaction that ran w.apply has, and the record is spare.
	*buf = w.record
	b.records.Put(buf)
	if err != nil {
		return fmt.Errorf("storing verdict %s: %w", v.VerificationID, err)
	}
	return nil
}

// maxPooledRecord is the largest record buffer kept for the next verdict:
// the server's records are about 1.8 KB (BENCHMARKS.md, "Store").
const maxPooledRecord = 16 << 10

// verdictsFillPercent is the verdicts bucket's fill factor. bbolt splits a
// page that overflows at FillPercent of a page, the rest going to a new
// page; its default, 0.5, suits keys that arrive in random order (a
// half-full page has room for them) but leaves half of every page of an
// append-only bucket empty. Verdicts arrive nearly in verified_at order
// (concurrent requests' times are a few milliseconds out of order at most),
// so their pages are filled. agent_time, which appends at one place per
// agent, keeps the default: with one agent full pages would halve it, but
// with many agents those places lie inside the bucket, and a full page split
// there leaves a nearly empty one each time. BENCHMARKS.md ("Store") has the
// measurements.
const verdictsFillPercent = 1.0

// verdictWrite is a validated, encoded verdict ready to be written.
type verdictWrite struct {
	key     []byte // verdicts-bucket key: time(verified_at), verification id
	record  []byte // verdicts-bucket value
	agent   string // "" when the verdict is not counted
	nanos   int64  // verified_at
	pass    bool
	summary []byte   // agent_time value
	entry   [32]byte // log entry: LogEntry(receipt)
	noLog   bool     // not appended to the log (Options.NoLog)
}

// id returns the verification id, the key's tail.
func (w verdictWrite) id() []byte { return w.key[8:] }

// prepareVerdict validates and encodes v, the record appended to buf[:0],
// and computes its log entry.
func prepareVerdict(buf []byte, v Verdict) (verdictWrite, error) {
	w, err := encodeVerdictWrite(buf, v)
	if err != nil {
		return verdictWrite{}, err
	}
	if w.entry, err = LogEntry(v.Receipt); err != nil {
		return verdictWrite{}, err
	}
	return w, nil
}

// prepareVerdict is the package's prepareVerdict; on a store opened with
// NoLog the write has no log entry and is not appended to the log.
func (b *Bolt) prepareVerdict(buf []byte, v Verdict) (verdictWrite, error) {
	if !b.noLog {
		return prepareVerdict(buf, v)
	}
	w, err := encodeVerdictWrite(buf, v)
	w.noLog = true
	return w, err
}

// encodeVerdictWrite validates and encodes v, the record appended to
// buf[:0], without its log entry.
func encodeVerdictWrite(buf []byte, v Verdict) (verdictWrite, error) {
	if err := validateVerdict(v); err != nil {
		return verdictWrite{}, err
	}
	v.VerifiedAt = v.VerifiedAt.UTC()
	w := verdictWrite{nanos: v.VerifiedAt.UnixNano(), pass: v.Result == ResultPass}
	w.key = timeKey(w.nanos, v.VerificationID)
	var err error
	if w.record, err = appendVerdict(buf[:0], &v); err != nil {
		return verdictWrite{}, err
	}
	if v.AgentID != "" && !IsTestAgent(v.AgentID) {
		w.agent = v.AgentID
		w.summary = encodeSummary(v)
	}
	return w, nil
}

// apply writes the verdict, its id entry, its log entry, its agent's
// counters and its index entry. It only reads and writes tx, so a shared commit may run it
// again safely.
func (w verdictWrite) apply(tx *bolt.Tx) error {
	ids := tx.Bucket(bucketVerdictIDs)
	verdicts := tx.Bucket(bucketVerdicts)
	if at := ids.Get(w.id()); at != nil {
		old, err := storedRecord(verdicts, at, w.id())
		if err != nil {
			return err
		}
		if bytes.Equal(old, w.record) {
			return nil
		}
		return ErrDuplicate
	}
	verdicts.FillPercent = verdictsFillPercent
	if err := verdicts.Put(w.key, w.record); err != nil {
		return err
	}
	if err := ids.Put(w.id(), w.key[:8]); err != nil {
		return err
	}
	if !w.noLog {
		if err := appendLog(tx, w.key, w.entry); err != nil {
			return err
		}
	}
	if w.agent == "" {
		return nil
	}
	agents := tx.Bucket(bucketAgents)
	agg, err := decodeAggregate(agents.Get([]byte(w.agent)))
	if err != nil {
		return err
	}
	agg.add(w.nanos, w.pass)
	if err := agents.Put([]byte(w.agent), agg.encode()); err != nil {
		return err
	}
	return tx.Bucket(bucketAgentTime).Put(append(agentPrefix(w.agent), w.key...), w.summary)
}

// storedRecord returns the verdicts-bucket value of the verification id
// whose verdict_ids entry is at; valid until the transaction ends.
func storedRecord(verdicts *bolt.Bucket, at, id []byte) ([]byte, error) {
	if len(at) != 8 {
		return nil, fmt.Errorf("%w: id entry of %d bytes", ErrCorrupt, len(at))
	}
	var buf [8 + 64]byte
	record := verdicts.Get(append(append(buf[:0], at...), id...))
	if record == nil {
		return nil, fmt.Errorf("%w: id entry without its verdict", ErrCorrupt)
	}
	return record, nil
}

// Receipt returns the verdict stored under verificationID, or ErrNotFound
// (also for ids PutVerdict would refuse: empty or too long).
func (b *Bolt) Receipt(ctx context.Context, verificationID string) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Verdict{}, err
	}
	if verificationID == "" || len(verificationID) > maxIDLen {
		return Verdict{}, fmt.Errorf("reading verdict: %w", ErrNotFound)
	}
	var v Verdict
	err := b.db.View(func(tx *bolt.Tx) error {
		id := []byte(verificationID)
		at := tx.Bucket(bucketVerdictIDs).Get(id)
		if at == nil {
			return ErrNotFound
		}
		record, err := storedRecord(tx.Bucket(bucketVerdicts), at, id)
		if err != nil {
			return err
		}
		v, err = decodeVerdict(record)
		return err
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("reading verdict %s: %w", verificationID, err)
	}
	return v, nil
}

func validateVerdict(v Verdict) error {
	switch {
	case v.VerificationID == "" || len(v.VerificationID) > maxIDLen:
		return fmt.Errorf("%w: verification id empty or longer than %d bytes", ErrInvalidVerdict, maxIDLen)
	case len(v.AgentID) > maxIDLen:
		return fmt.Errorf("%w: agent id longer than %d bytes", ErrInvalidVerdict, maxIDLen)
	case v.Result != ResultPass && v.Result != ResultFail:
		return fmt.Errorf("%w: result %q is not %q or %q", ErrInvalidVerdict, v.Result, ResultPass, ResultFail)
	case v.VerifiedAt.Before(minVerifiedAt) || !v.VerifiedAt.Before(maxVerifiedAt):
		return fmt.Errorf("%w: verified_at %s outside [%s, %s)", ErrInvalidVerdict,
			v.VerifiedAt.Format(time.RFC3339), minVerifiedAt.Format(time.RFC3339), maxVerifiedAt.Format(time.RFC3339))
	case len(v.Receipt) == 0 || !json.Valid(v.Receipt):
		return fmt.Errorf("%w: receipt is not JSON", ErrInvalidVerdict)
	}
	return nil
}

// appendVerdict appends a verdicts-bucket value to dst: the format byte,
// the uvarint length of the JSON of every field but the receipt
// (json.Marshal's, with "receipt":null), that JSON, then the receipt bytes
// verbatim (JSON encoding would re-escape them).
func appendVerdict(dst []byte, v *Verdict) ([]byte, error) {
	fields := *v
	fields.Receipt = nil
	text, err := json.Marshal(&fields)
	if err != nil {
		return nil, err
	}
	dst = append(dst, recordFormat)
	dst = binary.AppendUvarint(dst, uint64(len(text)))
	dst = append(dst, text...)
	return append(dst, v.Receipt...), nil
}

// decodeVerdict parses a verdicts-bucket value into a Verdict that shares no
// memory with it.
func decodeVerdict(record []byte) (Verdict, error) {
	fields, receipt, err := splitRecord(record)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	if err := json.Unmarshal(fields, &v); err != nil {
		return Verdict{}, fmt.Errorf("%w: verdict record: %v", ErrCorrupt, err)
	}
	v.Receipt = bytes.Clone(receipt)
	return v, nil
}

// splitRecord returns the JSON of a verdicts-bucket value's fields and its
// receipt bytes.
func splitRecord(record []byte) (fields, receipt []byte, err error) {
	if len(record) == 0 || record[0] != recordFormat {
		return nil, nil, fmt.Errorf("%w: unknown verdict record format", ErrCorrupt)
	}
	n, size := binary.Uvarint(record[1:])
	if size <= 0 || n > uint64(len(record)-1-size) {
		return nil, nil, fmt.Errorf("%w: truncated verdict record", ErrCorrupt)
	}
	start := 1 + size
	return record[start : start+int(n)], record[start+int(n):], nil
}

// encodeSummary lays out an agent_time value: the result ('p' or 'f'),
// overall.ratio as float64 bits, uvarints overall.passed and overall.total,
// then task_id and output_hash, each as a uvarint length and the bytes. The
// verification id and verified_at are in the key.
func encodeSummary(v Verdict) []byte {
	out := make([]byte, 0, 1+8+2*binary.MaxVarintLen64+2+len(v.TaskID)+2+len(v.OutputHash))
	out = append(out, v.Result[0])
	out = binary.BigEndian.AppendUint64(out, math.Float64bits(v.Overall.Ratio))
	out = binary.AppendUvarint(out, uint64(v.Overall.Passed))
	out = binary.AppendUvarint(out, uint64(v.Overall.Total))
	out = binary.AppendUvarint(out, uint64(len(v.TaskID)))
	out = append(out, v.TaskID...)
	out = binary.AppendUvarint(out, uint64(len(v.OutputHash)))
	return append(out, v.OutputHash...)
}

var errBadIndexEntry = fmt.Errorf("%w: malformed index entry", ErrCorrupt)

// decodeSummary reads an agent_time entry; timeKey is its key without the
// agent prefix.
func decodeSummary(timeKey, value []byte) (VerdictSummary, error) {
	if len(timeKey) <= 8 || len(value) < 9 {
		return VerdictSummary{}, errBadIndexEntry
	}
	s := VerdictSummary{
		VerificationID: string(timeKey[8:]),
		VerifiedAt:     time.Unix(0, readTime(timeKey)).UTC(),
	}
	switch value[0] {
	case 'p':
		s.Result = ResultPass
	case 'f':
		s.Result = ResultFail
	default:
		return VerdictSummary{}, errBadIndexEntry
	}
	s.Overall.Ratio = math.Float64frombits(binary.BigEndian.Uint64(value[1:]))
	rest := value[9:]
	var ints [2]uint64
	for i := range ints {
		n, size := binary.Uvarint(rest)
		if size <= 0 {
			return VerdictSummary{}, errBadIndexEntry
		}
		ints[i], rest = n, rest[size:]
	}
	s.Overall.Passed, s.Overall.Total = int(ints[0]), int(ints[1])
	var strs [2]string
	for i := range strs {
		n, size := binary.Uvarint(rest)
		if size <= 0 || n > uint64(len(rest)-size) {
			return VerdictSummary{}, errBadIndexEntry
		}
		strs[i], rest = string(rest[size:size+int(n)]), rest[size+int(n):]
	}
	s.TaskID, s.OutputHash = strs[0], strs[1]
	return s, nil
}

// agentPrefix is the agent_time key prefix of one agent: its id's length as
// a big-endian uint16, then the id, so no agent's prefix is another's.
func agentPrefix(agentID string) []byte {
	p := make([]byte, 0, 2+len(agentID)+8+36)
	p = binary.BigEndian.AppendUint16(p, uint16(len(agentID)))
	return append(p, agentID...)
}

// indexKey is the agent_time key of a verdict.
func indexKey(agentID string, nanos int64, verificationID string) []byte {
	return append(agentPrefix(agentID), timeKey(nanos, verificationID)...)
}

// timeKey is the part of an agent_time key after the agent prefix:
// verified_at as Unix nanoseconds with the sign bit flipped (so keys sort by
// time), big-endian, then the verification id (so equal times stay apart).
func timeKey(nanos int64, verificationID string) []byte {
	return append(appendTime(nil, nanos), verificationID...)
}

// appendTime appends Unix nanoseconds as a key part that sorts by time:
// big-endian with the sign bit flipped.
func appendTime(dst []byte, nanos int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(nanos)^(1<<63))
}

// readTime reverses appendTime on the first 8 bytes of b.
func readTime(b []byte) int64 {
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
}

// aggregate is an agents-bucket value: counters and the recency-weighted
// pass and fail sums, decayed to the agent's last verified_at.
type aggregate struct {
	total, passed, failed uint64
	first, last           int64   // Unix nanos
	wPass, wFail          float64 // Σ 2^(-(last - t_i)/H)
}

const aggregateLen = 56

func decodeAggregate(v []byte) (aggregate, error) {
	if v == nil {
		return aggregate{}, nil
	}
	if len(v) != aggregateLen {
		return aggregate{}, fmt.Errorf("%w: agent record of %d bytes", ErrCorrupt, len(v))
	}
	be := binary.BigEndian
	return aggregate{
		total:  be.Uint64(v[0:]),
		passed: be.Uint64(v[8:]),
		failed: be.Uint64(v[16:]),
		first:  int64(be.Uint64(v[24:])),
		last:   int64(be.Uint64(v[32:])),
		wPass:  math.Float64frombits(be.Uint64(v[40:])),
		wFail:  math.Float64frombits(be.Uint64(v[48:])),
	}, nil
}

func (a aggregate) encode() []byte {
	be := binary.BigEndian
	out := make([]byte, 0, aggregateLen)
	for _, u := range []uint64{a.total, a.passed, a.failed, uint64(a.first), uint64(a.last),
		math.Float64bits(a.wPass), math.Float64bits(a.wFail)} {
		out = be.AppendUint64(out, u)
	}
	return out
}

// add counts one verdict at t (Unix nanos). The weighted sums stay decayed
// to the latest time seen, so verdicts may arrive in any order.
func (a *aggregate) add(t int64, pass bool) {
	if a.total == 0 {
		a.first, a.last = t, t
	}
	if t > a.last {
		f := decay(t - a.last)
		a.wPass *= f
		a.wFail *= f
		a.last = t
	}
	a.first = min(a.first, t)
	w := decay(a.last - t)
	a.total++
	if pass {
		a.passed++
		a.wPass += w
	} else {
		a.failed++
		a.wFail += w
	}
}
