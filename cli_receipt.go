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
	dataDir := fs.String("data-dir", "", "use the public keys of this local key store (default: "+defaultDataDir(getenv)+")")
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
	switch {
	case *key != "" && *card != "":
		return fmt.Errorf("give --key or --card, not both")
	case *key != "":
		if keys, err = signing.KeysFromBase64("", *key); err != nil {
			return fmt.Errorf("reading --key: %w", err)
		}
	case *card != "":
		data, err := readInputFile("--card", *card)
		if err != nil {
			return err
		}
		if keys, err = signing.KeysFromAgentCard(data); err != nil {
			return fmt.Errorf("reading --card: %w", err)
		}
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
		if err := printJSON(stdout, report); err != nil {
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
	}
	if checkErr != nil || !report.Valid {
		return exitError{1}
	}
	return nil
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
