//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/store"
)

const multiAgent = "multi-agent"

// verifierProc is a verifier process started from the built binary.
type verifierProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	stdin  io.WriteCloser
	mcp    *mcpLines // stdio servers
	base   string    // HTTP servers
}

func startProc(t *testing.T, bin string, args ...string) *verifierProc {
	t.Helper()
	p := &verifierProc{cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}}
	p.cmd.Stderr = p.stderr
	p.cmd.Env = append(os.Environ(), "VERIFIER_SIGNING_KEY=") // the data dir's own key
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	if len(args) > 0 && args[0] == "--http" {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if m := servingLine.FindStringSubmatch(p.stderr.String()); m != nil {
				p.base = "http://" + m[1]
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("the HTTP server did not start:\n%s", p.stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	p.mcp = newMCPLines(stdin, stdout)
	if err := p.mcp.handshake(); err != nil {
		t.Fatalf("stdio handshake: %v\n%s", err, p.stderr)
	}
	return p
}

// verifyArgs is a verification request for the shared agent.
func verifyArgs(t *testing.T, task string) string {
	t.Helper()
	m := readJSON(t, filepath.Join("testdata", "invoice-pass.json"))
	m["agent_id"], m["task_id"] = multiAgent, task
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// verify runs one verification through p and returns its verification id,
// or the error that kept it from being acknowledged.
func (p *verifierProc) verify(t *testing.T, task string) (string, error) {
	var answer []byte
	if p.mcp != nil {
		res, err := p.mcp.call("verify_schema", verifyArgs(t, task))
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("isError: %s", res.Structured)
		}
		answer = res.Structured
	} else {
		resp, err := http.Post(p.base+"/verify/schema", "application/json", strings.NewReader(verifyArgs(t, task)))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if answer, err = io.ReadAll(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("status %d: %s (%v)", resp.StatusCode, answer, err)
		}
	}
	var a struct {
		VerificationID string `json:"verification_id"`
	}
	if err := json.Unmarshal(answer, &a); err != nil || a.VerificationID == "" {
		return "", fmt.Errorf("answer without a verification id: %s", answer)
	}
	return a.VerificationID, nil
}

// total reads the agent's verdict count through p.
func (p *verifierProc) total(t *testing.T) int {
	t.Helper()
	var rec struct {
		Total  *int `json:"total"`
		Inputs struct {
			Total int `json:"total"`
		} `json:"inputs"`
	}
	if p.mcp != nil {
		if err := json.Unmarshal(p.mcp.mustCall(t, "get_verification_record", `{"agent_id":"`+multiAgent+`"}`), &rec); err != nil {
			t.Fatal(err)
		}
		return rec.Inputs.Total
	}
	resp, err := http.Get(p.base + "/reputation/" + multiAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || rec.Total == nil {
		t.Fatalf("GET /reputation: status %d, %v", resp.StatusCode, err)
	}
	return *rec.Total
}

// TestManyProcessesOneDataDir: an HTTP server and two stdio servers on one
// data dir all record their verdicts and read every verdict back. Then the
// owner of the store is killed with SIGKILL while both stdio servers are
// verifying: every call goes on, and every verdict acknowledged before or
// after is in the store; then an owner exits while the other runs.
func TestManyProcessesOneDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildVerifier(t)
	dir := t.TempDir()
	httpProc := startProc(t, bin, "--http", "127.0.0.1:0", "--data-dir", dir)
	if !strings.Contains(httpProc.stderr.String(), "this process owns it") {
		t.Fatalf("the first process does not own the store:\n%s", httpProc.stderr)
	}
	a := startProc(t, bin, "--data-dir", dir)
	b := startProc(t, bin, "--data-dir", dir)
	procs := map[string]*verifierProc{"http": httpProc, "stdio-a": a, "stdio-b": b}
	var acked []string
	for name, p := range procs {
		for i := range 3 {
			id, err := p.verify(t, fmt.Sprintf("%s-%d", name, i))
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, p.stderr)
			}
			acked = append(acked, id)
		}
	}
	for name, p := range procs {
		if got := p.total(t); got != len(acked) {
			t.Errorf("%s reads %d verdicts of the agent, want all %d", name, got, len(acked))
		}
		if strings.Contains(p.stderr.String(), "without reputation") {
			t.Errorf("%s serves without the store:\n%s", name, p.stderr)
		}
	}

	// Kill the owner while both stdio servers stream calls.
	var mu sync.Mutex
	var failures []string
	var spans [][2]time.Time // each streamed call's start and end
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for name, p := range map[string]*verifierProc{"stdio-a": a, "stdio-b": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				id, err := p.verify(t, fmt.Sprintf("%s-stream-%d", name, i))
				mu.Lock()
				spans = append(spans, [2]time.Time{start, time.Now()})
				if err != nil {
					failures = append(failures, fmt.Sprintf("%s call %d: %v", name, i, err))
				} else {
					acked = append(acked, id)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	killedAt := time.Now()
	if err := httpProc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = httpProc.cmd.Wait()
	mu.Lock()
	atKill := len(acked)
	mu.Unlock()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d calls failed after the owner was killed:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	midCall := 0
	for _, sp := range spans {
		if sp[0].Before(killedAt) && sp[1].After(killedAt) {
			midCall++
		}
	}
	if midCall == 0 {
		t.Error("no call was in flight when the owner was killed")
	}
	if len(acked) <= atKill {
		t.Errorf("no call was acknowledged after the kill (%d before, %d after)", atKill, len(acked))
	}
	t.Logf("%d verdicts acknowledged, %d of them before the SIGKILL; %d calls in flight at the kill", len(acked), atKill, midCall)
	for name, p := range map[string]*verifierProc{"stdio-a": a, "stdio-b": b} {
		if got := p.total(t); got != len(acked) {
			t.Errorf("%s reads %d verdicts after the kill, want the %d acknowledged", name, got, len(acked))
		}
	}

	// The owner among the two exits (stdin closed) while the other runs.
	first, second := a, b
	if strings.Contains(b.stderr.String(), "this process now owns it") {
		first, second = b, a
	}
	if !strings.Contains(first.stderr.String(), "this process now owns it") {
		t.Errorf("neither stdio server took the store over:\n%s\n%s", a.stderr, b.stderr)
	}
	first.stdin.Close()
	if err := first.cmd.Wait(); err != nil {
		t.Errorf("the stdio server exited with %v:\n%s", err, first.stderr)
	}
	id, err := second.verify(t, "after-exit")
	if err != nil {
		t.Fatalf("a call after the other process exited: %v\n%s", err, second.stderr)
	}
	acked = append(acked, id)
	if got := second.total(t); got != len(acked) {
		t.Errorf("the last process reads %d verdicts, want %d", got, len(acked))
	}
	second.stdin.Close()
	if err := second.cmd.Wait(); err != nil {
		t.Errorf("the stdio server exited with %v:\n%s", err, second.stderr)
	}

	// Every acknowledged verdict is in the file, under its id.
	st, err := store.OpenBolt(filepath.Join(dir, storeFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range acked {
		if _, err := st.Receipt(context.Background(), id); err != nil {
			t.Errorf("acknowledged verdict %s: %v", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, store.SocketName)); !os.IsNotExist(err) {
		t.Errorf("the socket is left behind after every process exited: %v", err)
	}
	var all bytes.Buffer
	for name, p := range procs {
		fmt.Fprintf(&all, "--- %s\n%s", name, p.stderr)
	}
	if t.Failed() {
		t.Logf("stderr of the processes:\n%s", all.String())
	}
}
