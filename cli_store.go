package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// The help of `verifier store` and of its two subcommands.
var (
	storeHelp = commandHelp{
		usage: "usage: verifier store copy --from FILE --to postgres://… [--keys DIR] [--sample N]\n" +
			"       verifier store check [--data-dir DIR | --store postgres://…] [--json]",
		about: "copy moves a bbolt history (the server using it stopped) into a PostgreSQL database; check runs the\n" +
			"integrity check of a data dir's store or of a database. 'verifier store copy --help' and\n" +
			"'verifier store check --help' print each one's flags.",
	}
	storeCopyHelp = commandHelp{
		usage: "usage: verifier store copy --from FILE --to postgres://… [--keys DIR] [--sample N]",
		about: "Copies every verdict, agent, payment id, allowance counter and recorded key of a bbolt store (the\n" +
			"server using it stopped) into a PostgreSQL database, then compares the counts and a sample of\n" +
			"receipts byte for byte.",
	}
	storeCheckHelp = commandHelp{
		usage: "usage: verifier store check [--data-dir DIR | --store postgres://…] [--json]",
		about: "Checks a store's integrity: the verdict index, agent counters, the log's records, entries and tree\n" +
			"hashes, and every receipt's signature under its recorded key. Exit 0 when clean, 1 listing what\n" +
			"is wrong, 2 when the store cannot be read.",
	}
)

// runStore is `verifier store copy --from FILE --to postgres://…` and
// `verifier store check [--data-dir DIR | --store postgres://…]`.
func runStore(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		return showHelp(stdout, storeHelp, nil)
	case len(args) > 0 && args[0] == "copy":
		return runStoreCopy(ctx, args[1:], stdout, stderr, getenv)
	case len(args) > 0 && args[0] == "check":
		return runStoreCheck(ctx, args[1:], stdout, stderr, getenv)
	}
	return usageError(stderr, storeHelp)
}

// runStoreCopy is `verifier store copy`.
func runStoreCopy(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("store copy", stderr)
	from := fs.String("from", "", "the bbolt store file to copy ("+storeFile+" in a data dir; the server using it must be stopped)")
	to := fs.String("to", getenv("VERIFIER_STORE"), "the PostgreSQL database to copy into, postgres://… (env VERIFIER_STORE)")
	keysDir := fs.String("keys", "", "a key folder whose public keys are recorded in the database too, so receipts they signed keep verifying (default: keys/ beside --from, when there is one)")
	sample := fs.Int("sample", store.DefaultCopySample, "receipts compared byte for byte after the copy, besides the first and the last")
	if err := parseFlags(fs, args, storeCopyHelp, stdout, stderr); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, storeCopyHelp)
	case *from == "":
		return errors.New("store copy: --from is required (the bbolt file to copy)")
	case !store.IsPostgresURL(*to):
		return errors.New("store copy: --to (or VERIFIER_STORE) must be a postgres:// or postgresql:// URL")
	case *sample < 0:
		return errors.New("store copy: --sample must not be negative")
	}
	src, err := store.OpenBolt(*from, nil)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	defer src.Close()
	dst, err := store.OpenPostgres(ctx, *to, nil)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	defer dst.Close()
	folderKeys, err := recordKeyFolder(ctx, dst, *keysDir, filepath.Join(filepath.Dir(*from), "keys"))
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	report, err := store.CopyToPostgres(ctx, src, dst, *sample)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	fmt.Fprintf(stderr, "copied and checked %d verdicts (%d receipts compared byte for byte), %d agents, %d payment ids, %d allowance counters; "+
		"%d signing keys recorded in the file and %d in the key folder are now the database's\n",
		report.Verdicts, report.Sampled, report.Agents, report.Payments, report.Allowance, report.SigningKeys, folderKeys)
	if report.LogIdentity == store.LogIdentityKept {
		fmt.Fprintln(stderr, "the database already serves a transparency log under its own origin and key: the copied verdicts joined it, and the file's log origin and key were not carried")
	}
	return printJSON(stdout, report)
}

// recordKeyFolder records the public keys of the key folder dir (or, when
// dir is "", of beside when it exists) in st, and returns how many.
func recordKeyFolder(ctx context.Context, st store.Store, dir, beside string) (int, error) {
	if dir == "" {
		if _, err := os.Stat(beside); errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		dir = beside
	}
	ks, err := signing.OpenKeyStore(dir, &signing.KeyStoreOptions{NoCreate: true})
	if err != nil {
		return 0, fmt.Errorf("reading the key folder %s: %w", dir, err)
	}
	if err := recordSigningKeys(ctx, st, ks); err != nil {
		return 0, err
	}
	return len(ks.PublicKeys()), nil
}

// storeCheckReport is `store check --json`'s answer.
type storeCheckReport struct {
	Store    string   `json:"store"`
	OK       bool     `json:"ok"`
	Findings []string `json:"findings"`
}

// runStoreCheck is `verifier store check`: the integrity check of a bbolt
// file (the server using it must be stopped) or a PostgreSQL database.
// Exit 0 when clean, 1 with findings, 2 when the store cannot be read.
func runStoreCheck(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("store check", stderr)
	dataDir := fs.String("data-dir", defaultDataDir(getenv), "the data dir whose "+storeFile+" to check (stop the verifier using it first)")
	storeURL := fs.String("store", getenv("VERIFIER_STORE"), "a postgres://… database to check instead (env VERIFIER_STORE)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args, storeCheckHelp, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(stderr, storeCheckHelp)
	}
	var (
		name   string
		st     store.Store
		verify func(context.Context) error
	)
	var findings []string
	if *storeURL != "" {
		if !store.IsPostgresURL(*storeURL) {
			return errors.New("store check: --store (or VERIFIER_STORE) must be a postgres:// or postgresql:// URL")
		}
		p, err := store.OpenPostgres(ctx, *storeURL, nil)
		if err != nil {
			return fmt.Errorf("store check: %w", err)
		}
		defer p.Close()
		st, verify, name = p, p.Verify, "the PostgreSQL store"
	} else {
		file := filepath.Join(*dataDir, storeFile)
		name = file
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("store check: %w", err)
		}
		b, err := store.OpenBolt(file, nil)
		switch {
		case errors.Is(err, store.ErrLocked):
			return fmt.Errorf("store check: %w: stop the verifier using %s, then check again", err, *dataDir)
		case errors.Is(err, store.ErrCorrupt):
			findings = append(findings, err.Error())
		case err != nil:
			return fmt.Errorf("store check: %w", err)
		default:
			defer b.Close()
			st, verify = b, b.Verify
		}
	}
	if verify != nil {
		for _, err := range []error{verify(ctx), store.CheckKeysRecorded(ctx, st)} {
			if err != nil {
				findings = append(findings, splitFindings(err)...)
			}
		}
	}
	report := storeCheckReport{Store: name, OK: len(findings) == 0, Findings: findings}
	if report.Findings == nil {
		report.Findings = []string{}
	}
	if *asJSON {
		if err := printJSON(stdout, report); err != nil {
			return err
		}
	} else if report.OK {
		fmt.Fprintf(stdout, "store check passed: %s is consistent (verdicts, agents, transparency log and key records)\n", name)
	} else {
		fmt.Fprintf(stdout, "store check FAILED: %s\n", name)
		for _, f := range findings {
			fmt.Fprintf(stdout, "  - %s\n", f)
		}
	}
	if !report.OK {
		return exitError{1}
	}
	return nil
}

// splitFindings is a joined error's findings, one a line.
func splitFindings(err error) []string {
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
