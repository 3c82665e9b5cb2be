package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/mod/sumdb/note"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// Where verify_receipt took its keys from.
const (
	keySourceServer    = "server"
	keySourcePublicKey = "public_key"
	keySourceAgentCard = "agent_card"
	// keySourceReceipt: the receipt's own verify.public_key, which is not
	// one of this verifier's keys. It proves the receipt intact since it
	// was signed, not who signed it.
	keySourceReceipt = "receipt"
)

const verifyReceiptDescription = `Check a receipt offline: the signed answer of verify_schema (or a trust record of get_verification_record), from this verifier or any service using the same scheme. Answers which checks held (signature, key, timestamp, and with the original request: output_hash, schema_hash, rules_hash, request_hash and a re-run of the verdict) and an overall valid boolean. With log_proof (the issuer's GET /log/proof/{verification_id} answer), also that its transparency log includes the receipt.

When to call: before paying a seller who hands you a receipt, or before relying on a record someone forwarded. Pass the original request too: only then is the receipt tied to the output you actually received.

What to do with the answer: valid false means reject the receipt (do not pay on it); valid true with attested_result "pass" means the work was verified as claimed. isError: the arguments are malformed; fix them as fields[] says.`

// receiptAnswer is verify_receipt's structured content: the report of
// CheckReceipt and what follows from it.
type receiptAnswer struct {
	*tools.ReceiptReport
	RequestChecked bool                `json:"request_checked"`
	LogChecked     bool                `json:"log_checked,omitempty"`
	KeySource      string              `json:"key_source"`
	AttestedResult *string             `json:"attested_result"`
	NextActions    []engine.NextAction `json:"next_actions"`
}

func verifyReceiptTool() *mcp.Tool {
	f := false
	return &mcp.Tool{
		Name:         contract.VerifyReceipt,
		Title:        "Check a signed receipt",
		Description:  verifyReceiptDescription,
		InputSchema:  json.RawMessage(contract.VerifyReceiptInput),
		OutputSchema: contract.ResultSchema("The receipt report or, when isError is set, the error object.", contract.ReceiptReport),
		Annotations: &mcp.ToolAnnotations{
			Title:           "Check a signed receipt",
			ReadOnlyHint:    true,
			IdempotentHint:  false,
			DestructiveHint: &f,
			OpenWorldHint:   &f,
		},
	}
}

// mcpVerifyReceipt adapts verify_receipt to Service.CheckReceipt. The
// receipt and request are passed on as the bytes the client sent.
func (s mcpService) mcpVerifyReceipt(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	args, e := toolArgs(req.Params.Arguments, "receipt", "request", "public_key", "agent_card", "log_proof", "log_key")
	var in receiptInputs
	if e == nil {
		in, e = s.receiptArgs(ctx, args)
	}
	if e != nil {
		s.logCall(ctx, contract.VerifyReceipt, start, e.Code)
		return errorResult(e), nil
	}
	if in.logProof != nil {
		in.stored = s.storedReceipt(ctx, args["receipt"])
	}
	ans := s.checkReceiptInputs(args["receipt"], in)
	body, err := ijson.Marshal(ans)
	if err != nil {
		s.logCall(ctx, contract.VerifyReceipt, start, tools.CodeInternal)
		return errorResult(tools.AsError(err)), nil
	}
	s.logCall(ctx, contract.VerifyReceipt, start, fmt.Sprintf("valid=%t", ans.Valid))
	return answerResult(receiptText(ans), body), nil
}

// receiptInputs are verify_receipt's checked arguments beside the receipt.
type receiptInputs struct {
	request []byte // the original request; nil when not given
	keys    signing.KeyResolver
	source  string // where keys came from: a keySource constant
	// logProof is the GET /log/proof answer to check the receipt's
	// inclusion in the transparency log with, under the note verifier key
	// logKey; nil when not given.
	logProof []byte
	logKey   string
	// stored is this verifier's stored compact receipt of the receipt's
	// verification, which the log holds when the receipt is the full
	// answer; nil when there is none.
	stored []byte
}

// storedReceipt reads the stored compact receipt of receipt's
// verification_id from this verifier's store; nil when there is no store
// or no such verdict (the log check then says what is missing).
func (s mcpService) storedReceipt(ctx context.Context, receipt []byte) []byte {
	var ids struct {
		VerificationID string `json:"verification_id"`
	}
	if s.Store == nil || json.Unmarshal(receipt, &ids) != nil || ids.VerificationID == "" {
		return nil
	}
	v, err := s.Store.Receipt(ctx, ids.VerificationID)
	if err != nil {
		return nil
	}
	return v.Receipt
}

// checkReceiptInputs checks receipt with in: its signature and, with the
// request, its hashes and verdict (CheckReceipt), and with a log proof,
// its inclusion in the transparency log (CheckLogInclusion). Valid only
// when every check held.
func (s mcpService) checkReceiptInputs(receipt []byte, in receiptInputs) receiptAnswer {
	report, _ := s.CheckReceipt(receipt, in.request, in.keys) // the report lists every failure
	ans := receiptAnswer{ReceiptReport: report, RequestChecked: in.request != nil, KeySource: in.source}
	if in.logProof != nil {
		checks, ok := tools.CheckLogInclusionStored(receipt, in.stored, in.logProof, in.logKey)
		report.Checks = append(report.Checks, checks...)
		report.Valid = report.Valid && ok
		ans.LogChecked = true
	}
	if report.Valid {
		var head struct {
			Result *string `json:"result"`
		}
		_ = json.Unmarshal(receipt, &head) // valid: it parsed as I-JSON already
		ans.AttestedResult = head.Result
	}
	ans.NextActions = receiptNextActions(ans)
	return ans
}

// receiptArgs checks verify_receipt's arguments and picks the keys.
func (s mcpService) receiptArgs(ctx context.Context, args map[string][]byte) (receiptInputs, *tools.Error) {
	var problems []engine.FieldProblem
	switch raw, sent := args["receipt"]; {
	case !sent:
		problems = append(problems, engine.FieldProblem{Field: "receipt", Problem: "is required",
			Fix: "Send receipt: the signed answer object exactly as received, attestation included."})
	case tools.JSONKind(raw) != '{':
		problems = append(problems, engine.FieldProblem{Field: "receipt", Problem: "must be a JSON object",
			Fix: "Send the signed answer as an object, not as a string holding JSON."})
	}
	if raw, sent := args["request"]; sent && tools.JSONKind(raw) != '{' && tools.JSONKind(raw) != 'n' {
		problems = append(problems, engine.FieldProblem{Field: "request", Problem: "must be an object or null",
			Fix: "Send the original verification request as an object, or leave request out."})
	}
	var keys signing.KeyResolver
	source := keySourceServer
	rawCard, cardSent := args["agent_card"]
	if _, keySent := args["public_key"]; keySent && cardSent {
		problems = append(problems, engine.FieldProblem{Field: "agent_card", Problem: "is given together with public_key",
			Fix: "Send the signer's key one way: public_key or agent_card, not both."})
	}
	if cardSent {
		source = keySourceAgentCard
		var cardErr error
		if tools.JSONKind(rawCard) == '{' {
			keys, cardErr = signing.KeysFromAgentCard(rawCard)
		}
		switch {
		case tools.JSONKind(rawCard) != '{':
			problems = append(problems, engine.FieldProblem{Field: "agent_card", Problem: "must be a JSON object",
				Fix: "Send the agent card as the object served at /.well-known/agent-card.json, not as a string holding JSON."})
		case cardErr != nil:
			problems = append(problems, engine.FieldProblem{Field: "agent_card", Problem: "has no usable key: " + cardErr.Error(),
				Fix: "Send the signer's card as published: capabilities.extensions[] with its attestation entry, whose params.publicKeys list {keyVersion, algorithm: \"Ed25519\", publicKey, publicKeyEncoding: \"" + signing.PublicKeyEncoding + "\"}."})
		}
	} else if raw, sent := args["public_key"]; sent {
		var b64 string
		var keyErr error
		if tools.JSONKind(raw) == '"' && json.Unmarshal(raw, &b64) == nil {
			keys, keyErr = signing.KeysFromBase64("", b64)
		}
		if keys == nil || keyErr != nil {
			problems = append(problems, engine.FieldProblem{Field: "public_key", Problem: "is not an Ed25519 public key in standard base64",
				Fix: "Send the 32-byte public key as standard base64 (44 characters), as the agent card's publicKeys list it, or leave public_key out."})
		}
		source = keySourcePublicKey
	} else if embedded, err := signing.EmbeddedKey(args["receipt"]); err == nil && !s.ownKey(ctx, embedded) {
		keys, source = embedded, keySourceReceipt
	} else if s.Keys != nil {
		// Every key this verifier publishes: its own and those its store
		// records (another replica's, or this store's before a migration).
		keys = s.PublishedKeyResolver(ctx)
	} else {
		problems = append(problems, engine.FieldProblem{Field: "public_key", Problem: "is required here",
			Fix: "This verifier has no key store; send the signer's public key as standard base64."})
	}
	in := receiptInputs{request: args["request"], keys: keys, source: source}
	if tools.JSONKind(in.request) == 'n' {
		in.request = nil
	}
	var logProblems []engine.FieldProblem
	in.logProof, in.logKey, logProblems = s.receiptLogArgs(args)
	problems = append(problems, logProblems...)
	if len(problems) > 0 {
		return receiptInputs{}, tools.InvalidRequest(problems)
	}
	return in, nil
}

// receiptLogArgs checks verify_receipt's log_proof and log_key and picks
// the log's verifier key: log_key, else the transparencyLog of agent_card,
// else this verifier's own log key when it serves a log.
func (s mcpService) receiptLogArgs(args map[string][]byte) (proof []byte, logKey string, problems []engine.FieldProblem) {
	proof, proofSent := args["log_proof"]
	rawKey, keySent := args["log_key"]
	if !proofSent {
		if keySent {
			problems = append(problems, engine.FieldProblem{Field: "log_key", Problem: "is given without log_proof",
				Fix: "Send log_key together with log_proof (the answer of GET /log/proof/{verification_id}), or leave it out."})
		}
		return nil, "", problems
	}
	if tools.JSONKind(proof) != '{' {
		problems = append(problems, engine.FieldProblem{Field: "log_proof", Problem: "must be a JSON object", Fix: tools.LogProofFix})
	} else if _, _, p := tools.DecodeLogProof(proof); p != nil {
		field := "log_proof"
		if p.Member != "" {
			field += "." + p.Member
		}
		problems = append(problems, engine.FieldProblem{Field: field, Problem: p.Problem, Fix: tools.LogProofFix})
	}
	const keyFix = "Send log_key: the issuer's transparency log key, params.transparencyLog.verifierKey of its agent card (/.well-known/agent-card.json), a note verifier key <name>+<hash>+<base64>."
	switch {
	case keySent:
		if tools.JSONKind(rawKey) != '"' || json.Unmarshal(rawKey, &logKey) != nil {
			logKey = ""
		}
		if _, err := note.NewVerifier(logKey); err != nil {
			problems = append(problems, engine.FieldProblem{Field: "log_key", Problem: "is not a note verifier key", Fix: keyFix})
		}
	case tools.JSONKind(args["agent_card"]) == '{' && tools.LogVerifierKey(args["agent_card"]) != "":
		logKey = tools.LogVerifierKey(args["agent_card"])
	case s.LogKey != nil:
		logKey = s.LogKey.VerifierKey()
	default:
		problems = append(problems, engine.FieldProblem{Field: "log_key", Problem: "is required here",
			Fix: "This verifier serves no transparency log, and no agent_card naming one was given. " + keyFix})
	}
	return proof, logKey, problems
}

// ownKey reports whether the embedded key (from signing.EmbeddedKey) is one
// of this verifier's published keys.
func (s mcpService) ownKey(ctx context.Context, embedded signing.Keys) bool {
	if s.Keys == nil {
		return false
	}
	b64 := base64.StdEncoding.EncodeToString(embedded[""])
	return slices.ContainsFunc(s.PublishedKeys(ctx), func(k signing.PublicKey) bool { return k.PublicKey == b64 })
}

func receiptNextActions(a receiptAnswer) []engine.NextAction {
	switch {
	case !a.Valid:
		return []engine.NextAction{{Action: "reject_receipt"}}
	case a.AttestedResult != nil && *a.AttestedResult == "fail":
		return []engine.NextAction{{Action: "withhold_payment", For: "buyer"}, {Action: "repair_and_reverify", For: "seller", Using: "hints"}}
	case !a.RequestChecked:
		return []engine.NextAction{{Action: "recheck_with_request", Using: "verify_receipt"}}
	case a.AttestedResult != nil && *a.AttestedResult == "pass":
		return []engine.NextAction{{Action: "proceed_to_payment", For: "buyer"}}
	default:
		return []engine.NextAction{{Action: "rely_on_record"}}
	}
}

// receiptText renders a receipt report for a person.
func receiptText(a receiptAnswer) string {
	var b strings.Builder
	if a.Valid {
		fmt.Fprintf(&b, "Receipt VALID: signed with key %s", a.KeyVersion)
		if a.AttestedResult != nil {
			fmt.Fprintf(&b, "; it attests result %q", *a.AttestedResult)
		}
		b.WriteString(".\n")
	} else {
		b.WriteString("Receipt NOT valid: do not rely on it.\n")
	}
	for _, c := range a.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		if c.Detail == "" {
			fmt.Fprintf(&b, "%s %s\n", mark, c.Name)
		} else {
			fmt.Fprintf(&b, "%s %s: %s\n", mark, c.Name, c.Detail)
		}
	}
	if a.KeySource == keySourceReceipt {
		b.WriteString("The key came from the receipt itself (verify.public_key): this proves the receipt is intact since it was signed, not who signed it. To check the signer, pass their published key as public_key.\n")
	}
	if !a.RequestChecked {
		b.WriteString("The original request was not given, so the hashes were not recomputed: pass it as request to tie the receipt to the output you hold.")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
