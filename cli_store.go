package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/verifier-dev/verifier/store"
)

// storeHelp is `verifier store copy`'s help.
var storeHelp = commandHelp{
	usage: "usage: verifier store copy --from FILE --to postgres://… [--sample N]",
	about: "Copies every verdict, agent, payment id and allowance counter of a bbolt store (the server using it\n" +
		"stopped) into a PostgreSQL database, then compares the counts and a sample of receipts byte for byte.",
}

// runStore is `verifier store copy --from FILE --to postgres://…`.
func runStore(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("store copy", stderr)
	from := fs.String("from", "", "the bbolt store file to copy ("+storeFile+" in a data dir; the server using it must be stopped)")
	to := fs.String("to", getenv("VERIFIER_STORE"), "the PostgreSQL database to copy into, postgres://… (env VERIFIER_STORE)")
	sample := fs.Int("sample", store.DefaultCopySample, "receipts compared byte for byte after the copy, besides the first and the last")
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		return showHelp(stdout, storeHelp, fs)
	case len(args) == 0 || args[0] != "copy":
		return usageError(stderr, storeHelp)
	}
	if err := parseFlags(fs, args[1:], storeHelp, stdout, stderr); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, storeHelp)
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
	report, err := store.CopyToPostgres(ctx, src, dst, *sample)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	fmt.Fprintf(stderr, "copied and checked %d verdicts (%d receipts compared byte for byte), %d agents, %d payment ids, %d allowance counters\n",
		report.Verdicts, report.Sampled, report.Agents, report.Payments, report.Allowance)
	return printJSON(stdout, report)
}
