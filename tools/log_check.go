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

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// The check names of an inclusion check, in the order they run.
const (
	checkLogProof      = "log_proof"
	checkLogCheckpoint = "log_checkpoint"
	checkLogEntry      = "log_entry"
	checkLogInclusion  = "log_inclusion"
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
	fail := func(name, format string, args ...any) ([]signing.Check, bool) {
		return append(checks, signing.Check{Name: name, Detail: fmt.Sprintf(format, args...)}), false
	}
	pass := func(name, format string, args ...any) {
		checks = append(checks, signing.Check{Name: name, OK: true, Detail: fmt.Sprintf(format, args...)})
	}
	var p LogProof
	dec := json.NewDecoder(bytes.NewReader(proofDoc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.LogIndex < 0 || p.TreeSize <= p.LogIndex || len(p.InclusionProof) > maxLogProofHashes {
		return fail(checkLogProof, "not a GET /log/proof/{verification_id} answer (JSON with log_index < tree_size, entry, inclusion_proof, checkpoint)")
	}
	proof := make(tlog.RecordProof, len(p.InclusionProof))
	for i, h := range p.InclusionProof {
		raw, err := base64.StdEncoding.DecodeString(h)
		if err != nil || len(raw) != tlog.HashSize {
			return fail(checkLogProof, "inclusion_proof[%d] is not a base64 SHA-256 hash", i)
		}
		copy(proof[i][:], raw)
	}
	pass(checkLogProof, "index %d in a tree of %d", p.LogIndex, p.TreeSize)

	verifier, err := note.NewVerifier(verifierKey)
	if err != nil {
		return fail(checkLogCheckpoint, "the log key is not a note verifier key (<name>+<hash>+<base64>): take params.transparencyLog.verifierKey from the agent card")
	}
	signed, err := note.Open([]byte(p.Checkpoint), note.VerifierList(verifier))
	if err != nil {
		return fail(checkLogCheckpoint, "the checkpoint is not signed by the log key %s", verifier.Name())
	}
	size, root, ok := parseCheckpoint(signed.Text, verifier.Name())
	if !ok || size != p.TreeSize {
		return fail(checkLogCheckpoint, "the checkpoint is not a tree of %d records of the log %s", p.TreeSize, verifier.Name())
	}
	pass(checkLogCheckpoint, "signed by %s, tree size %d", verifier.Name(), size)

	entry, err := store.LogEntry(receipt)
	if err != nil {
		return fail(checkLogEntry, "the receipt is not I-JSON, so it has no log entry")
	}
	if p.Entry != base64.StdEncoding.EncodeToString(entry[:]) {
		return fail(checkLogEntry, "the proof's entry is not the SHA-256 of this receipt's RFC 8785 form: the log holds the compact receipt GET /receipts/{verification_id} serves")
	}
	var ids struct {
		VerificationID string `json:"verification_id"`
	}
	if json.Unmarshal(receipt, &ids) != nil || ids.VerificationID != p.VerificationID {
		return fail(checkLogEntry, "the proof is for another verification_id than the receipt's")
	}
	pass(checkLogEntry, "SHA-256 of the receipt's RFC 8785 form")

	if err := tlog.CheckRecord(proof, size, root, p.LogIndex, tlog.RecordHash(entry[:])); err != nil {
		return fail(checkLogInclusion, "the inclusion proof does not lead from record %d to the checkpoint's root", p.LogIndex)
	}
	pass(checkLogInclusion, "record %d of the checkpoint's tree", p.LogIndex)
	return checks, true
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
	raw, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(raw) != tlog.HashSize {
		return 0, root, false
	}
	copy(root[:], raw)
	return size, root, true
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
