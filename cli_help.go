package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// commandHelp is a command's help text: its usage line(s) and what it does.
// Its flags are printed after it from the command's flag set.
type commandHelp struct {
	usage string // starts with "usage: verifier …"
	about string
}

// commands are the subcommands, in the order the usage lists them. run
// dispatches on the same names.
var commands = []struct {
	name, summary string
	subs          []string // its subcommands, if it has any
}{
	{"verify", "verify a request (or --jsonl, one per line) and print the signed answer", nil},
	{"receipt", "receipt verify: check a receipt offline, its hashes and verdict, its log inclusion", []string{"verify"}},
	{"log", "log audit: audit a service's transparency log and an agent's trust record", []string{"audit"}},
	{"keys", "keys show|rotate: print the public keys, or make a new signing key", []string{"show", "rotate"}},
	{"store", "store copy|check: move a bbolt history into PostgreSQL, or check a store's integrity", []string{"copy", "check"}},
	{"version", "print the version, commit, Go release and platform", nil},
	{"help", "help [COMMAND]: print this text, or a command's", nil},
}

// errHelpShown tells run that help was asked for and printed: exit 0.
var errHelpShown = errors.New("help shown")

// isHelpFlag reports whether arg is one of the spellings the flag package
// takes for help.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// parseFlags parses a command's flags. Asked for help, it prints the help
// and the flags to stdout and returns errHelpShown; for a bad flag the flag
// package has printed why to stderr, and parseFlags adds the usage there
// and returns exitError{2}.
func parseFlags(fs *flag.FlagSet, args []string, help commandHelp, stdout, stderr io.Writer) error {
	fs.Usage = func() {}
	switch err := fs.Parse(args); {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return showHelp(stdout, help, fs)
	default:
		return usageError(stderr, help)
	}
}

// showHelp prints a command's help and its flags to w and returns
// errHelpShown.
func showHelp(w io.Writer, help commandHelp, fs *flag.FlagSet) error {
	fmt.Fprintln(w, help.usage)
	if help.about != "" {
		fmt.Fprintf(w, "\n%s\n", help.about)
	}
	if fs != nil && hasFlags(fs) {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, fs)
	}
	return errHelpShown
}

// usageError prints a command's usage line to stderr, with where to read
// more, and returns the usage error's exit status.
func usageError(stderr io.Writer, help commandHelp) error {
	fmt.Fprintln(stderr, help.usage)
	name, _, _ := strings.Cut(strings.TrimPrefix(help.usage, "usage: verifier "), " ")
	if name == "" || name == "help" || strings.HasPrefix(name, "[") {
		fmt.Fprintln(stderr, "run 'verifier help' for the commands and flags")
	} else {
		fmt.Fprintf(stderr, "run 'verifier help %s' for its flags\n", name)
	}
	return exitError{2}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printFlags prints fs's flags and defaults to w. A default read from the
// environment may be a database URL with a password: it is shown redacted.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if u, err := url.Parse(f.DefValue); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				f.DefValue = u.Redacted()
			}
		}
	})
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// rootHelp is the program's own usage; its flags are the server's.
func rootHelp() commandHelp {
	names := make([]string, len(commands))
	var list strings.Builder
	for i, c := range commands {
		names[i] = c.name
		fmt.Fprintf(&list, "\n  %-8s  %s", c.name, c.summary)
	}
	return commandHelp{
		usage: "usage: verifier [--http ADDR] [--data-dir DIR] [--public-url URL] [flags]\n" +
			"       verifier " + strings.Join(names, "|") + " …",
		about: "verifier checks an AI agent's JSON output against a JSON Schema and cross-field rules and signs\n" +
			"the answer. Without a command it is an MCP server: over stdio, or with --http over streamable HTTP\n" +
			"at /mcp beside the REST routes and pages.\n\ncommands:" + list.String() +
			"\n\n'verifier help COMMAND' (or 'verifier COMMAND --help') prints a command's flags.",
	}
}

// helpHelp is `verifier help`'s own help.
var helpHelp = commandHelp{
	usage: "usage: verifier help [COMMAND [SUBCOMMAND]]",
	about: "Prints the program's usage, its commands and the server's flags; with a command, that command's usage and flags.",
}

// runHelp is `verifier help [COMMAND [SUBCOMMAND]]`: the same text as
// `verifier COMMAND [SUBCOMMAND] --help`.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return showHelp(stdout, rootHelp(), serverFlagSet(stderr, getenv, new(serverFlags), new(bool)))
	}
	if isHelpFlag(args[0]) || args[0] == "help" {
		return showHelp(stdout, helpHelp, nil)
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		switch {
		case len(args) > 2:
			return usageError(stderr, helpHelp)
		case len(args) == 2 && !slices.Contains(c.subs, args[1]):
			fmt.Fprintf(stderr, "verifier help: %s has no subcommand %q\n", c.name, args[1])
			return usageError(stderr, helpHelp)
		}
		// The command (or its subcommand) reads --help before anything
		// else, so this prints its help and runs nothing.
		return dispatch(ctx, append(args[:len(args):len(args)], "--help"), strings.NewReader(""), stdout, stderr, getenv)
	}
	fmt.Fprintf(stderr, "verifier help: unknown command %q\n", args[0])
	return usageError(stderr, rootHelp())
}
