package main

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// wantCommands are the subcommands the usage line must list, written out
// here rather than read from the commands table.
var wantCommands = []string{"verify", "receipt", "log", "keys", "store", "version", "help"}

// runCLIFull runs the program and returns stdout, stderr and the exit code.
func runCLIFull(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errOut, getenv)
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		t.Fatalf("run %q: %v (stderr %s)", args, err, errOut.String())
	}
	return out.String(), errOut.String(), code
}

// TestHelp: every way of asking for help prints the usage to stdout, nothing
// to stderr, and exits 0.
func TestHelp(t *testing.T) {
	type want struct {
		usage string   // stdout's first line starts with it
		has   []string // stdout holds each
	}
	type helpCase struct {
		args []string
		want want
	}
	root := want{"usage: verifier [--http ADDR]", []string{"commands:", "flags:", "-http string", "-version"}}
	tests := []helpCase{
		{[]string{"-h"}, root},
		{[]string{"--help"}, root},
		{[]string{"-help"}, root},
		{[]string{"help"}, root},
		{[]string{"help", "help"}, want{"usage: verifier help [COMMAND", nil}},
		{[]string{"help", "--help"}, want{"usage: verifier help [COMMAND", nil}},
		{[]string{"version", "--help"}, want{"usage: verifier version", []string{"commit"}}},
		{[]string{"help", "version"}, want{"usage: verifier version", nil}},
	}
	flagOf := map[string][]string{
		"verify":  {"-jsonl", "-data-dir string"},
		"receipt": {"-key string", "-card string", "-log-proof string"},
		"log":     {"-url string", "-agent string"},
		"keys":    {"-data-dir string"},
	}
	// store's subcommands have flags of their own; store's help names both.
	storeHelp := want{"usage: verifier store copy", []string{"verifier store check", "'verifier store check --help'"}}
	tests = append(tests, helpCase{[]string{"store", "--help"}, storeHelp}, helpCase{[]string{"help", "store"}, storeHelp})
	subFlags := map[string][]string{
		"store copy":  {"-from string", "-to string", "-keys string", "-sample int"},
		"store check": {"-data-dir string", "-store string", "-json"},
	}
	for cmd, flags := range flagOf {
		w := want{"usage: verifier " + cmd, append([]string{"flags:"}, flags...)}
		tests = append(tests, helpCase{[]string{cmd, "--help"}, w}, helpCase{[]string{cmd, "-h"}, w}, helpCase{[]string{"help", cmd}, w})
	}
	for _, sub := range [][]string{{"receipt", "verify"}, {"log", "audit"}, {"keys", "show"}, {"keys", "rotate"}, {"store", "copy"}, {"store", "check"}} {
		w := want{"usage: verifier " + sub[0], append([]string{"flags:"}, flagOf[sub[0]]...)}
		if flags, ok := subFlags[sub[0]+" "+sub[1]]; ok {
			w = want{"usage: verifier " + sub[0] + " " + sub[1], append([]string{"flags:"}, flags...)}
		}
		for _, args := range [][]string{{sub[0], sub[1], "--help"}, {sub[0], sub[1], "-h"}, {"help", sub[0], sub[1]}} {
			tests = append(tests, helpCase{args, w})
		}
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLIFull(t, testEnv, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("verifier %s: exit %d, stderr %q; want exit 0 and nothing on stderr", strings.Join(tt.args, " "), code, stderr)
			}
			if !strings.HasPrefix(stdout, tt.want.usage) {
				t.Errorf("verifier %s printed\n%s\nwant it to start with %q", strings.Join(tt.args, " "), stdout, tt.want.usage)
			}
			for _, s := range tt.want.has {
				if !strings.Contains(stdout, s) {
					t.Errorf("verifier %s: the help lacks %q:\n%s", strings.Join(tt.args, " "), s, stdout)
				}
			}
		})
	}
}

// TestUsageListsEveryCommand: the usage line names every subcommand, and
// the help lists each with a summary.
func TestUsageListsEveryCommand(t *testing.T) {
	stdout, _, _ := runCLIFull(t, testEnv, "help")
	lines := strings.Split(stdout, "\n")
	if len(lines) < 2 {
		t.Fatalf("verifier help printed %q", stdout)
	}
	line := strings.TrimSpace(lines[1])
	if want := "verifier " + strings.Join(wantCommands, "|") + " …"; line != want {
		t.Errorf("usage's second line = %q, want %q", line, want)
	}
	for _, c := range wantCommands {
		if !strings.Contains(stdout, "\n  "+c+" ") {
			t.Errorf("verifier help lists no %q command:\n%s", c, stdout)
		}
	}
}

// TestUsageErrors: an unknown command, subcommand or flag prints the usage
// to stderr, nothing to stdout, and exits 2.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		usage string // stderr holds it
	}{
		{[]string{"bogus"}, "usage: verifier [--http ADDR]"},
		{[]string{"--bogus"}, "usage: verifier [--http ADDR]"},
		{[]string{"help", "bogus"}, "usage: verifier [--http ADDR]"},
		{[]string{"help", "keys", "bogus"}, "usage: verifier help"},
		{[]string{"help", "verify", "x.json"}, "usage: verifier help"},
		{[]string{"help", "keys", "show", "x"}, "usage: verifier help"},
		{[]string{"verify", "--bogus"}, "usage: verifier verify"},
		{[]string{"verify", "a.json", "b.json"}, "usage: verifier verify"},
		{[]string{"receipt"}, "usage: verifier receipt verify"},
		{[]string{"receipt", "check", "r.json"}, "usage: verifier receipt verify"},
		{[]string{"receipt", "verify", "--bogus", "r.json"}, "usage: verifier receipt verify"},
		{[]string{"log"}, "usage: verifier log audit"},
		{[]string{"log", "audit", "--bogus"}, "usage: verifier log audit"},
		{[]string{"keys"}, "usage: verifier keys"},
		{[]string{"keys", "bogus"}, "usage: verifier keys"},
		{[]string{"keys", "show", "extra"}, "usage: verifier keys"},
		{[]string{"store"}, "usage: verifier store copy"},
		{[]string{"store", "check", "--bogus"}, "usage: verifier store check"},
		{[]string{"store", "copy", "--bogus"}, "usage: verifier store copy"},
		{[]string{"version", "extra"}, "usage: verifier version"},
		{[]string{"version", "--bogus"}, "usage: verifier version"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLIFull(t, testEnv, tt.args...)
			if code != 2 || stdout != "" {
				t.Errorf("verifier %s: exit %d, stdout %q; want exit 2 and nothing on stdout", strings.Join(tt.args, " "), code, stdout)
			}
			if !strings.Contains(stderr, tt.usage) {
				t.Errorf("verifier %s: stderr lacks %q:\n%s", strings.Join(tt.args, " "), tt.usage, stderr)
			}
		})
	}
}

// TestHelpRedactsDatabasePassword: a default read from VERIFIER_STORE is
// shown without its password.
func TestHelpRedactsDatabasePassword(t *testing.T) {
	const secret = "s3cret-pw"
	getenv := func(name string) string {
		if name == "VERIFIER_STORE" {
			return "postgres://verifier:" + secret + "@db.internal/verifier"
		}
		return testEnv(name)
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"store", "copy", "--help"}} {
		stdout, stderr, code := runCLIFull(t, getenv, args...)
		if code != 0 {
			t.Fatalf("verifier %s: exit %d", strings.Join(args, " "), code)
		}
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("verifier %s prints the database password:\n%s", strings.Join(args, " "), stdout)
		}
		if !strings.Contains(stdout, "postgres://verifier:xxxxx@db.internal/verifier") {
			t.Errorf("verifier %s does not show the redacted default:\n%s", strings.Join(args, " "), stdout)
		}
	}
}

// TestVersionCommand: `verifier version`, --version and -version print the
// same description, whose first line carries verifier_version.
func TestVersionCommand(t *testing.T) {
	var first string
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		stdout, stderr, code := runCLIFull(t, testEnv, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("verifier %s: exit %d, stderr %q", args[0], code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(lines) != 5 {
			t.Fatalf("verifier %s printed %d lines, want 5:\n%s", args[0], len(lines), stdout)
		}
		if want := "verifier " + verifierVersion(); lines[0] != want {
			t.Errorf("verifier %s: first line %q, want %q", args[0], lines[0], want)
		}
		for i, prefix := range []string{"commit:   ", "date:     ", "go:       " + runtime.Version(), "platform: " + runtime.GOOS + "/" + runtime.GOARCH} {
			if !strings.HasPrefix(lines[i+1], prefix) {
				t.Errorf("verifier %s: line %d = %q, want it to start with %q", args[0], i+2, lines[i+1], prefix)
			}
		}
		if first == "" {
			first = stdout
		} else if stdout != first {
			t.Errorf("verifier %s printed\n%s\nbut verifier version printed\n%s", args[0], stdout, first)
		}
	}
}
