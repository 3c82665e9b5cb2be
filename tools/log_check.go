package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// The check names of an inclusion check, in the order they run.
const (
	LogCheckProof      = "log_proof"
	LogCheckCheckpoint = "log_checkpoint"
	LogCheckEntry      = "log_entry"
	LogCheckInclusion  = "log_inclusion"
)

// maxLogProofHashes bounds a proof's length: a tree of 2^62 records has
// a proof of 62 hashes.
const maxLogProofHashes = 64

// CheckLogInclusion checks, offline, that receipt (the stored compact
// receipt, as GET /receipts/{verification_id} serves it or re-encoded) is in
// the transparency log, from proofDoc (a saved GET /log/proof answer) and
// the log's verifierKey (the card's params.transparencyLog.verifierKey):
// the checkpoint is a note signed by that key, its tree includes, at the
// proof's index, the entry store.LogEntry(receipt). It returns one check per
// step up to the first that fails; ok is true when all held.
func CheckLogInclusion(receipt, proofDoc []byte, verifierKey string) (checks []signing.Check, ok bool) {
	return CheckLogInclusionStored(receipt, nil, proofDoc, verifierKey)
}

// FullOnlyMembers are the members of a full verification answer that its
// compact form (detail "compact", the receipt the store and the log keep)
// lacks; every other member, attestation aside, is the same in both.
var FullOnlyMembers = []string{
	"request_hash", "errors", "errors_total", "errors_omitted",
	"errors_detail", "errors_detail_total", "errors_detail_omitted",
	"flags", "flags_total", "flags_omitted", "hints", "hints_total", "hints_omitted",
	"schema_compliance", "integrity_checks", "overall",
}

// IsLoggedFormOf reports whether stored, a compact receipt (as GET
// /receipts/{verification_id} serves it), is the logged form of receipt, a
// verification answer of either detail: stored without its attestation is
// receipt without its attestation and its FullOnlyMembers, member for
// member in RFC 8785 form. It is the one rule by which a full answer's
// log entry is found: `verifier receipt verify`, MCP verify_receipt and
// the /check page (logcheck.js) apply it.
func IsLoggedFormOf(stored, receipt []byte) bool {
	var s, r map[string]json.RawMessage
	if _, err := ijson.Decode(stored, nil); err != nil || json.Unmarshal(stored, &s) != nil || s == nil {
		return false
	}
	if _, err := ijson.Decode(receipt, nil); err != nil || json.Unmarshal(receipt, &r) != nil || r == nil {
		return false
	}
	delete(s, "attestation")
	delete(r, "attestation")
	for _, m := range FullOnlyMembers {
		delete(r, m)
	}
	if len(s) != len(r) {
		return false
	}
	for name, sv := range s {
		rv, ok := r[name]
		if !ok {
			return false
		}
		a, errA := signing.Canonicalize(sv)
		b, errB := signing.Canonicalize(rv)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}

// CheckLogInclusionStored is CheckLogInclusion for a receipt that may be
// the full answer, whose own entry the log does not hold: the log holds
// each verification's stored compact receipt. When receipt's entry is not
// the proof's, stored — that compact receipt, fetched from the service
// (GET /receipts/{verification_id}) or read from the store; nil when not at
// hand — stands for it if its entry is the proof's and it is the logged
// form of receipt (IsLoggedFormOf).
func CheckLogInclusionStored(receipt, stored, proofDoc []byte, verifierKey string) (checks []signing.Check, ok bool) {
	fail := func(name, format string, args ...any) ([]signing.Check, bool) {
		return append(checks, signing.Check{Name: name, Detail: fmt.Sprintf(format, args...)}), false
	}
	pass := func(name, format string, args ...any) {
		checks = append(checks, signing.Check{Name: name, OK: true, Detail: fmt.Sprintf(format, args...)})
	}
	p, proof, problem := DecodeLogProof(proofDoc)
	if problem != nil {
		return fail(LogCheckProof, "not a GET /log/proof/{verification_id} answer: %s", problem)
	}
	pass(LogCheckProof, "index %d in a tree of %d", p.LogIndex, p.TreeSize)

	verifier, err := note.NewVerifier(verifierKey)
	if err != nil {
		return fail(LogCheckCheckpoint, "the log key is not a note verifier key (<name>+<hash>+<base64>): take params.transparencyLog.verifierKey from the agent card")
	}
	signed, err := note.Open([]byte(p.Checkpoint), note.VerifierList(verifier))
	if err != nil {
		return fail(LogCheckCheckpoint, "the checkpoint is not signed by the log key %.80q", verifier.Name())
	}
	size, root, ok := parseCheckpoint(signed.Text, verifier.Name())
	if !ok || size != p.TreeSize {
		return fail(LogCheckCheckpoint, "the checkpoint is not a tree of %d records of the log %.80q", p.TreeSize, verifier.Name())
	}
	pass(LogCheckCheckpoint, "signed by %.80q, tree size %d", verifier.Name(), size)

	entry, err := store.LogEntry(receipt)
	if err != nil {
		return fail(LogCheckEntry, "the receipt is not I-JSON, so it has no log entry")
	}
	var ids struct {
		VerificationID string `json:"verification_id"`
	}
	if json.Unmarshal(receipt, &ids) != nil || ids.VerificationID != p.VerificationID {
		return fail(LogCheckEntry, "the proof is for another verification_id than the receipt's")
	}
	if p.Entry == base64.StdEncoding.EncodeToString(entry[:]) {
		pass(LogCheckEntry, "SHA-256 of the receipt's RFC 8785 form")
	} else {
		storedEntry, err := store.LogEntry(stored)
		if stored == nil || err != nil || p.Entry != base64.StdEncoding.EncodeToString(storedEntry[:]) || !IsLoggedFormOf(stored, receipt) {
			return fail(LogCheckEntry, "the proof's entry is not the SHA-256 of this receipt's RFC 8785 form, nor of this verification's stored compact receipt "+
				"(the log holds the compact receipt GET /receipts/{verification_id} serves; check with the service's URL to have it fetched, or check that compact receipt)")
		}
		entry = storedEntry
		pass(LogCheckEntry, "SHA-256 of this verification's stored compact receipt (GET /receipts/{verification_id}), which says the same as this receipt in every member it has")
	}

	if err := tlog.CheckRecord(proof, size, root, p.LogIndex, tlog.RecordHash(entry[:])); err != nil {
		return fail(LogCheckInclusion, "the inclusion proof does not lead from record %d to the checkpoint's root", p.LogIndex)
	}
	pass(LogCheckInclusion, "record %d of the checkpoint's tree", p.LogIndex)
	return checks, true
}

// LogProofProblem is what is wrong with the shape of a GET /log/proof
// document: the member at fault ("" for the whole document, else its name
// or an element of inclusion_proof) and why. It never quotes the document.
type LogProofProblem struct {
	Member, Problem string
}

// String names the problem: its member and what is wrong with it.
func (p *LogProofProblem) String() string {
	if p.Member == "" {
		return "the document " + p.Problem
	}
	return p.Member + " " + p.Problem
}

// LogProofFix is how to fix a log proof that is not a GET /log/proof answer.
const LogProofFix = "Send the answer of GET /log/proof/{verification_id} as it came: an object with verification_id, log_index, entry, tree_size, inclusion_proof and checkpoint."

// DecodeLogProof reads a GET /log/proof/{verification_id} answer and its
// inclusion proof's hashes, or says what is wrong with its shape: every
// member present with its type, nothing else, log_index < tree_size,
// entry and each proof hash a base64 SHA-256 hash.
func DecodeLogProof(doc []byte) (LogProof, tlog.RecordProof, *LogProofProblem) {
	var p LogProof
	if _, err := ijson.Decode(doc, nil); err != nil {
		return p, nil, &LogProofProblem{"", "is not an I-JSON object (RFC 7493: each key once, valid UTF-8)"}
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(doc, &members) != nil || members == nil {
		return p, nil, &LogProofProblem{"", "is not a JSON object"}
	}
	fields := []struct {
		name string
		dst  any
		want string
	}{
		{"verification_id", &p.VerificationID, "a string"},
		{"log_index", &p.LogIndex, "a whole number"},
		{"entry", &p.Entry, "a string"},
		{"tree_size", &p.TreeSize, "a whole number"},
		{"inclusion_proof", &p.InclusionProof, "an array of strings"},
		{"checkpoint", &p.Checkpoint, "a string"},
	}
	if len(members) > len(fields) {
		return p, nil, &LogProofProblem{"", "has members a GET /log/proof answer does not have"}
	}
	for _, f := range fields {
		raw, ok := members[f.name]
		switch {
		case !ok:
			return p, nil, &LogProofProblem{f.name, "is missing"}
		case JSONKind(raw) == 'n' || json.Unmarshal(raw, f.dst) != nil:
			return p, nil, &LogProofProblem{f.name, "must be " + f.want}
		}
	}
	switch {
	case p.LogIndex < 0:
		return p, nil, &LogProofProblem{"log_index", "must not be negative"}
	case p.TreeSize <= p.LogIndex:
		return p, nil, &LogProofProblem{"tree_size", "must be greater than log_index"}
	case len(p.InclusionProof) > maxLogProofHashes:
		return p, nil, &LogProofProblem{"inclusion_proof", fmt.Sprintf("has more than %d hashes", maxLogProofHashes)}
	}
	if _, ok := decodeLogHash(p.Entry); !ok {
		return p, nil, &LogProofProblem{"entry", "is not a base64 SHA-256 hash"}
	}
	proof := make(tlog.RecordProof, len(p.InclusionProof))
	for i, h := range p.InclusionProof {
		var ok bool
		if proof[i], ok = decodeLogHash(h); !ok {
			return p, nil, &LogProofProblem{fmt.Sprintf("inclusion_proof[%d]", i), "is not a base64 SHA-256 hash"}
		}
	}
	return p, proof, nil
}

// decodeLogHash decodes a standard base64 SHA-256 hash.
func decodeLogHash(b64 string) (tlog.Hash, bool) {
	var h tlog.Hash
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != tlog.HashSize {
		return h, false
	}
	copy(h[:], raw)
	return h, true
}

// parseCheckpoint reads a C2SP tlog-checkpoint body of the log origin:
// origin, tree size and base64 root hash, each on its line (extension
// lines may follow).
func parseCheckpoint(text, origin string) (size int64, root tlog.Hash, ok bool) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] != origin {
		return 0, root, false
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return 0, root, false
	}
	root, ok = decodeLogHash(lines[2])
	return size, root, ok
}

// LogVerifierKey returns the transparency log's verifier key an agent
// card publishes (params.transparencyLog.verifierKey of its attestation
// extension), "" when it names none.
func LogVerifierKey(card []byte) string {
	var c AgentCard
	if json.Unmarshal(card, &c) != nil {
		return ""
	}
	for _, ext := range c.Capabilities.Extensions {
		if ext.Params.TransparencyLog != nil {
			return ext.Params.TransparencyLog.VerifierKey
		}
	}
	return ""
}

// LogProof is the answer of GET /log/proof/{verification_id}: where a
// stored receipt is in the log and the proof that the signed checkpoint's
// tree includes it.
type LogProof struct {
	VerificationID string `json:"verification_id"`
	// LogIndex is the receipt's record index in the log.
	LogIndex int64 `json:"log_index"`
	// Entry is the log entry, the base64 SHA-256 of the RFC 8785 form of
	// the stored receipt (GET /receipts/{verification_id}).
	Entry string `json:"entry"`
	// TreeSize is the size of the checkpoint's tree.
	TreeSize int64 `json:"tree_size"`
	// InclusionProof is the RFC 6962 inclusion proof, base64 hashes from
	// the leaf up.
	InclusionProof []string `json:"inclusion_proof"`
	// Checkpoint is the signed note the proof is against.
	Checkpoint string `json:"checkpoint"`
}
