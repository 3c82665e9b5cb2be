package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/tools"
)

// maxCLIRequest bounds one request read by the CLI.
const maxCLIRequest = 64 << 20

// verifyHelp is `verifier verify`'s help.
var verifyHelp = commandHelp{
	usage: "usage: verifier verify [--data-dir DIR] [--jsonl] [flags] [FILE|-]",
	about: "Verifies the request in FILE (or stdin) and prints the signed answer; with --jsonl, one request per\n" +
		"line and one answer (or error) per line. Exit 0: all passed; 1: a verdict failed; 2: a request was\n" +
		"invalid. It reads only the key store in --data-dir, never the database, so it runs beside a server.",
}

// runVerify is `verifier verify [--data-dir DIR] [--jsonl] [FILE|-]`. It
// reads only the key store, never the database, so it runs beside a server
// on the same data dir. Exit 0: all passed; 1: a verdict failed; 2: a
// request was invalid.
func runVerify(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("verify", stderr)
	dataDir := fs.String("data-dir", defaultDataDir(getenv), "folder holding keys/ (and the store, unused here)")
	jsonl := fs.Bool("jsonl", false, "read one request per line and print one answer per line")
	var ef engineFlags
	ef.register(fs)
	if err := parseFlags(fs, args, verifyHelp, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageError(stderr, verifyHelp)
	}
	in := stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("opening request: %w", err)
		}
		defer f.Close()
		in = f
	}
	v, err := ef.verifier()
	if err != nil {
		return err
	}
	keys, err := openKeys(*dataDir, getenv)
	if err != nil {
		return err
	}
	svc := service(v, keys, "")
	worst := 0
	emit := func(body []byte) error {
		code, line := verifyOne(ctx, svc, body)
		worst = max(worst, code)
		_, err := fmt.Fprintf(stdout, "%s\n", line)
		return err
	}
	if *jsonl {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), maxCLIRequest)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if err := emit(line); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading requests: %w", err)
		}
	} else {
		body, err := io.ReadAll(io.LimitReader(in, maxCLIRequest+1))
		if err != nil {
			return fmt.Errorf("reading request: %w", err)
		}
		if len(body) > maxCLIRequest {
			return fmt.Errorf("request is larger than %d bytes", maxCLIRequest)
		}
		if err := emit(body); err != nil {
			return err
		}
	}
	if worst > 0 {
		return exitError{worst}
	}
	return nil
}

// verifyOne verifies one request and returns its exit code and output line.
func verifyOne(ctx context.Context, svc *tools.Service, body []byte) (int, []byte) {
	res, err := svc.Verify(ctx, body)
	if err != nil {
		e := tools.AsError(err)
		line, merr := ijson.Marshal(e)
		if merr != nil {
			line = []byte(`{"code":"internal_error","status":500}`)
		}
		return 2, line
	}
	if !res.Outcome.Pass {
		return 1, res.Answer
	}
	return 0, res.Answer
}
