package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
)

// receiptHelp is `verifier receipt verify`'s help.
var receiptHelp = commandHelp{
	usage: "usage: verifier receipt verify [--key BASE64 | --card FILE | --data-dir DIR] [--request REQUEST.json]\n" +
		"                               [--log-proof PROOF.json | --log URL] [--log-key VKEY] [--json] RECEIPT.json",
	about: "Checks a receipt offline: its signature against the signer's key (--key, the keys --card publishes,\n" +
		"a local key store, else the key the receipt carries, which proves it intact but not who signed it);\n" +
		"with --request, its hashes and verdict; with --log-proof or --log, its inclusion in the issuer's\n" +
		"transparency log. Exit 0 only when every check held.",
}

// runReceipt is `verifier receipt verify [--key B64 | --card FILE |
// --data-dir DIR] [--request REQUEST.json] [--json] RECEIPT.json`. Exit 0
// only when every check held.
func runReceipt(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("receipt verify", stderr)
	key := fs.String("key", "", "the signer's Ed25519 public key, standard base64")
	card := fs.String("card", "", "a saved agent card (agent-card.json) publishing the signer's keys")
	dataDir := fs.String("data-dir", "", "use the public keys of this local key store (default: the key the receipt carries in verify.public_key, else the key store in "+defaultDataDir(getenv)+")")
	requestFile := fs.String("request", "", "the original verification request: recompute the hashes and re-run the verdict")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	logProof := fs.String("log-proof", "", "a saved GET /log/proof/{verification_id} answer: check offline that the log includes the receipt (the stored compact receipt, as GET /receipts/{verification_id} serves it)")
	logURL := fs.String("log", "", "the service's base URL: fetch /log/proof/{verification_id} (and the stored compact receipt it logs, for a full answer) and check that the log includes the receipt; without --key, --card or --data-dir, the signer's keys and the log key come from the service's agent card")
	logKey := fs.String("log-key", "", "the log's note verifier key (default: params.transparencyLog.verifierKey of --card, or of the card at --log)")
	var ef engineFlags
	ef.register(fs)
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		return showHelp(stdout, receiptHelp, fs)
	case len(args) == 0 || args[0] != "verify":
		return usageError(stderr, receiptHelp)
	}
	if err := parseFlags(fs, args[1:], receiptHelp, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(stderr, receiptHelp)
	}
	receipt, err := readInputFile("the receipt", fs.Arg(0))
	if err != nil {
		return err
	}
	var keys signing.KeyResolver
	keySource := "key_store" // where the key came from, for the JSON report: key, card, key_store or receipt
	own := embeddedKey(receipt)
	var cardData []byte // the agent card: --card, or the one the --log service serves
	switch {
	case *key != "" && *card != "":
		return fmt.Errorf("give --key or --card, not both")
	case *key != "":
		keySource = "key"
		if keys, err = signing.KeysFromBase64("", *key); err != nil {
			return fmt.Errorf("reading --key: %w", err)
		}
	case *card != "":
		keySource = "card"
		if cardData, err = readInputFile("--card", *card); err != nil {
			return err
		}
		if keys, err = signing.KeysFromAgentCard(cardData); err != nil {
			return fmt.Errorf("reading --card: %w", err)
		}
	case *logURL != "" && *dataDir == "":
		// The service whose log is checked publishes the signer's keys.
		keySource = "card"
		if cardData, err = fetchDocument(*logURL, "/.well-known/agent-card.json"); err != nil {
			return fmt.Errorf("--log: reading the service's agent card: %w", err)
		}
		if keys, err = signing.KeysFromAgentCard(cardData); err != nil {
			return fmt.Errorf("--log: the service's agent card: %w", err)
		}
	case *dataDir == "" && own != nil:
		keys, keySource = own, "receipt"
	default:
		dir := *dataDir
		if dir == "" {
			dir = defaultDataDir(getenv)
		}
		// Checking creates nothing: a data dir without a key says so.
		ks, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), &signing.KeyStoreOptions{EnvSeed: getenv("VERIFIER_SIGNING_KEY"), NoCreate: true})
		if errors.Is(err, signing.ErrNoKey) {
			fmt.Fprintf(stderr, "verifier: no public key to check against in %s; pass --card agent-card.json (the service's card) or --key BASE64\n", filepath.Join(dir, "keys"))
			return exitError{2}
		}
		if err != nil {
			return fmt.Errorf("opening key store: %w", err)
		}
		keys = ks
	}
	var request []byte
	if *requestFile != "" {
		if request, err = readInputFile("--request", *requestFile); err != nil {
			return err
		}
	}
	v, err := ef.verifier()
	if err != nil {
		return err
	}
	report, checkErr := service(v, nil, "").CheckReceipt(receipt, request, keys)
	if *logProof != "" || *logURL != "" {
		in, err := logInclusionInputs(receipt, *logProof, *logURL, *logKey, cardData)
		if err != nil {
			return err
		}
		checks, ok := tools.CheckLogInclusionStored(receipt, in.stored, in.proof, in.vkey)
		report.Checks = append(report.Checks, checks...)
		report.Valid = report.Valid && ok
	}
	if *asJSON {
		out := struct {
			*signing.ReceiptReport
			KeySource string `json:"key_source"`
		}{report, keySource}
		if err := printJSON(stdout, out); err != nil {
			return err
		}
	} else {
		printChecks(stdout, report.Checks)
		if report.Valid {
			fmt.Fprintf(stdout, "receipt valid (context %s, key %s)\n", report.Context, report.KeyVersion)
		} else {
			fmt.Fprintln(stdout, "receipt NOT valid")
		}
		if keySource == "receipt" {
			fmt.Fprintln(stdout, "note: the key came from the receipt itself (verify.public_key): this proves the receipt is intact since it was signed, not who signed it; pass --card or --key to check the signer")
		}
	}
	if checkErr != nil || !report.Valid {
		return exitError{1}
	}
	return nil
}

// printChecks prints a report's checks, one line each: "ok  " or "FAIL",
// the check's name and its detail.
func printChecks(w io.Writer, checks []signing.Check) {
	for _, c := range checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		if c.Detail == "" {
			fmt.Fprintf(w, "%s %s\n", mark, c.Name)
		} else {
			fmt.Fprintf(w, "%s %-18s %s\n", mark, c.Name, c.Detail)
		}
	}
}

// embeddedKey returns the key a receipt carries (verify.public_key), or nil
// when it carries none or the receipt is not readable (checking it then
// says why).
func embeddedKey(receipt []byte) signing.Keys {
	keys, err := signing.EmbeddedKey(receipt)
	if err != nil {
		return nil
	}
	return keys
}

// readInputFile reads a file named on the command line for what (a flag or
// "the receipt"). An empty file is an error that says so, not a JSON
// parse error: the usual cause is a download that saved nothing.
func readInputFile(what, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("reading %s: the file %s is empty", what, path)
	}
	return data, nil
}

// logInputs is what an inclusion check needs.
type logInputs struct {
	proof  []byte // the GET /log/proof document
	vkey   string // the log's note verifier key
	stored []byte // the service's stored compact receipt (--log only; nil when not had)
}

// logInclusionInputs reads what an inclusion check needs: the /log/proof
// document (the file proofFile, or fetched from the service at logURL,
// with the stored compact receipt the log holds when receipt is the full
// answer) and the log's verifier key (logKey, else the one card — --card,
// or the card at logURL — publishes).
func logInclusionInputs(receipt []byte, proofFile, logURL, logKey string, card []byte) (in logInputs, err error) {
	if proofFile != "" && logURL != "" {
		return in, fmt.Errorf("give --log-proof or --log, not both")
	}
	if proofFile != "" {
		if in.proof, err = readInputFile("--log-proof", proofFile); err != nil {
			return in, err
		}
	} else {
		var ids struct {
			VerificationID string `json:"verification_id"`
		}
		if json.Unmarshal(receipt, &ids) != nil || ids.VerificationID == "" {
			return in, fmt.Errorf("--log: the receipt names no verification_id")
		}
		if in.proof, err = fetchDocument(logURL, "/log/proof/"+url.PathEscape(ids.VerificationID)); err != nil {
			return in, err
		}
		// Best effort: without it, a full answer's log check says so.
		in.stored, _ = fetchDocument(logURL, "/receipts/"+url.PathEscape(ids.VerificationID))
	}
	switch {
	case logKey != "":
		in.vkey = logKey
		return in, nil
	case card != nil:
		in.vkey = tools.LogVerifierKey(card)
	case logURL != "":
		data, err := fetchDocument(logURL, "/.well-known/agent-card.json")
		if err != nil {
			return in, err
		}
		in.vkey = tools.LogVerifierKey(data)
	}
	if in.vkey == "" {
		return in, fmt.Errorf("no log key: give --log-key, or a --card that publishes params.transparencyLog")
	}
	return in, nil
}

// maxFetchedDocument bounds a document fetched from a service.
const maxFetchedDocument = 1 << 20

// fetchDocument GETs path under the service base URL; only a 200 answer
// of at most maxFetchedDocument bytes is returned.
func fetchDocument(base, path string) ([]byte, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	return tools.FetchBounded(context.Background(), client, strings.TrimSuffix(base, "/")+path, maxFetchedDocument)
}
