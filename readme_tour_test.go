//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tourTimeout bounds the whole tour; it takes a few seconds.
const tourTimeout = 3 * time.Minute

// readmeTour returns the shell block of README.md between <!-- tour -->
// and <!-- /tour -->.
func readmeTour(t *testing.T) string {
	t.Helper()
	text := readme(t)
	const open, close = "<!-- tour -->\n```sh\n", "```\n<!-- /tour -->"
	if strings.Count(text, open) != 1 || strings.Count(text, close) != 1 {
		t.Fatalf("README.md must hold exactly one %q … %q block", open, close)
	}
	_, rest, _ := strings.Cut(text, open)
	block, _, _ := strings.Cut(rest, close)
	return block
}

// TestReadmeTour runs README.md's tour as one block, as a person pasting it
// would, with the freshly built verifier on PATH, in an empty folder: it
// must succeed and end with a receipt that `verifier receipt verify`
// accepts. bash runs it with -e and pipefail, so every step must succeed.
func TestReadmeTour(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed", "grep", "mktemp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the tour needs %s on PATH: %v", tool, err)
		}
	}
	bin := buildVerifier(t)
	script := filepath.Join(t.TempDir(), "tour.sh")
	if err := os.WriteFile(script, []byte(readmeTour(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	work, tmp := t.TempDir(), t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), tourTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+tmp, "XDG_DATA_HOME="+filepath.Join(tmp, "xdg"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The tour starts a server in the background: the whole process group
	// is killed on timeout, and after the run whatever is left of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // no process of the tour outlives it
	logs, _ := filepath.Glob(filepath.Join(tmp, "*", "server.log"))
	var serverLog []byte
	if len(logs) == 1 {
		serverLog, _ = os.ReadFile(logs[0])
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the tour did not finish in %s\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s", tourTimeout, &stdout, &stderr, serverLog)
	}
	if err != nil {
		t.Fatalf("the tour failed: %v\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s", err, &stdout, &stderr, serverLog)
	}

	out := stdout.String()
	for _, want := range []string{`"summary":{"result":"fail","blocking_checks":["consistency:sum_equals"]}`,
		`{"source":"integrity","check":"consistency:sum_equals"`, `"summary":{"result":"pass","blocking_checks":[]}`} {
		if !strings.Contains(out, want) {
			t.Errorf("the tour's output lacks %s:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	const accepted = "receipt valid (context json-schema-verifier/verify-schema-attestation/v1"
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, accepted) {
		t.Errorf("the tour ends with %q, want the receipt accepted (%s …)", last, accepted)
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "FAIL") {
			t.Errorf("a receipt check failed: %s", line)
		}
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("the tour wrote %d file(s) into the folder it ran in; it must write only under $tour", len(entries))
	}
}
