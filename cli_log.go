package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
)

// logHelp is `verifier log audit`'s help.
var logHelp = commandHelp{
	usage: "usage: verifier log audit --url URL [--agent ID] [--state FILE] [--log-key VKEY] [--max-records N] [--json]",
	about: "Audits a service's transparency log: fetches its signed checkpoint and every record, checks that the\n" +
		"log only grew since the checkpoint saved in --state, and with --agent replays that agent's logged\n" +
		"verdicts against its signed trust record. Exit 0 when every check held, 1 when one failed, 2 for a\n" +
		"usage error.",
}

// runLog is `verifier log audit --url URL [--agent ID] [--state FILE]
// [--log-key VKEY] [--max-records N] [--json]`: audit a service's
// transparency log, and an agent's trust record against it. Exit 0 when
// every check held, 1 when one failed, 2 for a usage error.
func runLog(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlagSet("log audit", stderr)
	baseURL := fs.String("url", "", "the service's base URL (its agent card and /log/ routes)")
	agent := fs.String("agent", "", "also audit this agent's signed trust record: replay its logged verdicts and recompute the score")
	stateFile := fs.String("state", "", "the file keeping the last audited checkpoint (default: "+filepath.Join(defaultAuditStateDir(getenv), "<log origin>.json")+")")
	logKey := fs.String("log-key", "", "the log's note verifier key (default: params.transparencyLog.verifierKey of the service's agent card)")
	maxRecords := fs.Int64("max-records", tools.DefaultAuditMaxRecords, "refuse to audit a log of more records")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		return showHelp(stdout, logHelp, fs)
	case len(args) == 0 || args[0] != "audit":
		return usageError(stderr, logHelp)
	}
	if err := parseFlags(fs, args[1:], logHelp, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 0 || *baseURL == "" || *maxRecords < 1 {
		return usageError(stderr, logHelp)
	}
	if !strings.HasPrefix(*baseURL, "http://") && !strings.HasPrefix(*baseURL, "https://") {
		fmt.Fprintln(stderr, "verifier log audit: --url must be an http:// or https:// URL")
		return exitError{2}
	}
	var statePath string
	report := tools.AuditLog(ctx, tools.AuditOptions{
		BaseURL: *baseURL, AgentID: *agent, LogKey: *logKey, MaxRecords: *maxRecords,
		Previous: func(origin string) (*tools.AuditState, error) {
			statePath = *stateFile
			if statePath == "" {
				statePath = filepath.Join(defaultAuditStateDir(getenv), auditStateName(origin))
			}
			return readAuditState(statePath)
		},
	})
	saved := ""
	if report.OK && report.State != nil && statePath != "" {
		if err := writeAuditState(statePath, report.State); err != nil {
			return err
		}
		saved = statePath
	}
	if *asJSON {
		out := struct {
			*tools.AuditReport
			StateFile string `json:"state_file,omitempty"`
		}{report, saved}
		if err := printJSON(stdout, out); err != nil {
			return err
		}
	} else {
		printChecks(stdout, report.Checks)
		if report.OK {
			fmt.Fprintf(stdout, "log audit passed: %s, tree size %d; state saved to %s\n", report.State.Origin, report.State.TreeSize, saved)
		} else {
			fmt.Fprintln(stdout, "log audit FAILED (state not saved)")
		}
	}
	if !report.OK {
		return exitError{1}
	}
	return nil
}

// defaultAuditStateDir is where log audits keep their state: under
// $XDG_STATE_HOME, else ~/.local/state.
func defaultAuditStateDir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "verifier", "log-audit")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "verifier", "log-audit")
	}
	return filepath.Join("verifier-log-audit")
}

// auditStateName is the state file name of a log origin: its characters
// other than letters, digits, '.', '-' and '_' become '_'.
func auditStateName(origin string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, origin)
	return strings.TrimLeft(name, ".") + ".json"
}

// maxAuditState bounds a state file.
const maxAuditState = 64 << 10

// readAuditState reads a state file; nil when there is none yet.
func readAuditState(path string) (*tools.AuditState, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAuditState+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var st tools.AuditState
	if len(data) > maxAuditState || json.Unmarshal(data, &st) != nil || st.Origin == "" {
		return nil, fmt.Errorf("%s is not a log audit state file (delete it to start over, losing the check against the last audit)", path)
	}
	return &st, nil
}

// writeAuditState writes a state file atomically (mode 0600, the folder
// 0700 when it is made).
func writeAuditState(path string, st *tools.AuditState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the audit state: %w", err)
	}
	if err := signing.WriteFileAtomic(path, append(data, '\n'), false); err != nil {
		return fmt.Errorf("saving the audit state: %w", err)
	}
	return nil
}
