package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/verifier-dev/verifier/signing"
)

// runReceipt is `verifier receipt verify [--key B64 | --card FILE |
// --data-dir DIR] [--request REQUEST.json] [--json] RECEIPT.json`. Exit 0
// only when every check held.
func runReceipt(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	usage := "usage: verifier receipt verify [--key BASE64 | --card FILE | --data-dir DIR] [--request REQUEST.json] [--json] RECEIPT.json"
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, usage)
		return exitError{2}
	}
	fs := newFlagSet("receipt verify", stderr)
	key := fs.String("key", "", "the signer's Ed25519 public key, standard base64")
	card := fs.String("card", "", "a saved agent card (agent-card.json) publishing the signer's keys")
	dataDir := fs.String("data-dir", "", "use the public keys of this local key store (default: the key the receipt carries in verify.public_key, else the key store in "+defaultDataDir(getenv)+")")
	requestFile := fs.String("request", "", "the original verification request: recompute the hashes and re-run the verdict")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var ef engineFlags
	ef.register(fs)
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, usage)
		return exitError{2}
	}
	receipt, err := readInputFile("the receipt", fs.Arg(0))
	if err != nil {
		return err
	}
	var keys signing.KeyResolver
	keySource := "key_store" // where the key came from, for the JSON report: key, card, key_store or receipt
	own := embeddedKey(receipt)
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
		data, err := readInputFile("--card", *card)
		if err != nil {
			return err
		}
		if keys, err = signing.KeysFromAgentCard(data); err != nil {
			return fmt.Errorf("reading --card: %w", err)
		}
	case *dataDir == "" && own != nil:
		keys, keySource = own, "receipt"
	default:
		dir := *dataDir
		if dir == "" {
			dir = defaultDataDir(getenv)
		}
		ks, err := openKeys(dir, getenv)
		if err != nil {
			return err
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
	if *asJSON {
		out := struct {
			*signing.ReceiptReport
			KeySource string `json:"key_source"`
		}{report, keySource}
		if err := printJSON(stdout, out); err != nil {
			return err
		}
	} else {
		for _, c := range report.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			if c.Detail == "" {
				fmt.Fprintf(stdout, "%s %s\n", mark, c.Name)
			} else {
				fmt.Fprintf(stdout, "%s %-18s %s\n", mark, c.Name, c.Detail)
			}
		}
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
