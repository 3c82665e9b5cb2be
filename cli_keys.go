package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
)

// keysHelp is `verifier keys`'s help.
var keysHelp = commandHelp{
	usage: "usage: verifier keys show|rotate [--data-dir DIR]",
	about: "show prints the public keys of the key store in --data-dir ({\"publicKeys\": [...]}) and creates\n" +
		"nothing; rotate makes a new current signing key, keeps the old public keys published, and prints\n" +
		"the new one (restart running servers to sign with it). VERIFIER_SIGNING_KEY, when set, is the key.",
}

// runKeys is `verifier keys show|rotate [--data-dir DIR]`.
func runKeys(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("keys", stderr)
	dataDir := fs.String("data-dir", defaultDataDir(getenv), "folder holding keys/")
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		return showHelp(stdout, keysHelp, fs)
	case len(args) == 0 || (args[0] != "show" && args[0] != "rotate"):
		return usageError(stderr, keysHelp)
	}
	if err := parseFlags(fs, args[1:], keysHelp, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError(stderr, keysHelp)
	}
	switch args[0] {
	case "show":
		// Showing creates nothing: a data dir without a key says so.
		dir := filepath.Join(*dataDir, "keys")
		keys, err := signing.OpenKeyStore(dir, &signing.KeyStoreOptions{EnvSeed: getenv("VERIFIER_SIGNING_KEY"), NoCreate: true})
		if errors.Is(err, signing.ErrNoKey) {
			fmt.Fprintf(stderr, "verifier: no signing key in %s; create one with: verifier keys rotate --data-dir %s (a server also makes one when it first starts)\n", dir, *dataDir)
			return exitError{1}
		}
		if err != nil {
			return fmt.Errorf("opening key store: %w", err)
		}
		return printJSON(stdout, map[string]any{"publicKeys": keys.PublicKeys()})
	case "rotate":
		pub, err := signing.RotateKey(filepath.Join(*dataDir, "keys"), &signing.KeyStoreOptions{EnvSeed: getenv("VERIFIER_SIGNING_KEY")})
		if err != nil {
			return fmt.Errorf("rotating key: %w", err)
		}
		fmt.Fprintf(stderr, "new current key %s; restart running servers to sign with it\n", pub.KeyVersion)
		return printJSON(stdout, pub)
	}
	return usageError(stderr, keysHelp)
}

func printJSON(w io.Writer, v any) error {
	b, err := ijson.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
