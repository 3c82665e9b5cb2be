// Command verifier checks an AI agent's structured output against a buyer's
// JSON Schema and cross-field rules, and answers with an Ed25519-signed
// receipt anyone can verify offline.
//
//	verifier                          MCP over stdio (the default)
//	verifier --http 127.0.0.1:8080    MCP streamable HTTP at /mcp plus REST
//	verifier verify [FILE|-]          one-off verification
//	verifier receipt verify FILE      offline receipt check
//	verifier log audit --url URL      audit a service's transparency log (and --agent ID's trust record)
//	verifier keys show|rotate         key management
//	verifier store copy --from F --to postgres://…   move a bbolt history into PostgreSQL
//	verifier version                  version, commit, Go release, platform (also --version)
//	verifier help [COMMAND]           usage; every command also takes --help
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exitError carries a process exit code through run.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	var ee exitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case err != nil:
		fmt.Fprintln(os.Stderr, "verifier:", err)
		os.Exit(2)
	}
}

// run is the whole program, for tests: args without the program name.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if err := dispatch(ctx, args, stdin, stdout, stderr, getenv); !errors.Is(err, errHelpShown) {
		return err
	}
	return nil
}

// dispatch runs the command args name, or the server. A command asked for
// its help prints it and returns errHelpShown.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 {
		switch args[0] {
		case "verify":
			return runVerify(ctx, args[1:], stdin, stdout, stderr, getenv)
		case "receipt":
			return runReceipt(args[1:], stdout, stderr, getenv)
		case "log":
			return runLog(ctx, args[1:], stdout, stderr, getenv)
		case "keys":
			return runKeys(args[1:], stdout, stderr, getenv)
		case "store":
			return runStore(ctx, args[1:], stdout, stderr, getenv)
		case "version":
			return runVersion(args[1:], stdout, stderr)
		case "help":
			return runHelp(ctx, args[1:], stdout, stderr, getenv)
		}
	}
	return runServer(ctx, args, stdin, stdout, stderr, getenv)
}
