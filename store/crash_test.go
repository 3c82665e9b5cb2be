package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/pgtest"
)

// These environment variables, when set, make the test binary act as a
// child process on the store file they name instead of running the tests.
const (
	crashChildEnv = "STORE_CRASH_CHILD_DB" // crashChild
	openChildEnv  = "STORE_OPEN_CHILD_DB"  // openChild
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	if path := os.Getenv(openChildEnv); path != "" {
		os.Exit(openChild(path))
	}
	os.Exit(pgtest.Main(m)) // stops the cluster the Postgres tests started
}

// openChild tries to open the store with a short lock timeout and prints
// the error; it exits 0 when the error is ErrLocked.
func openChild(path string) int {
	s, err := OpenBolt(path, &Options{Timeout: 200 * time.Millisecond})
	if err == nil {
		s.Close()
		fmt.Println("opened")
		return 1
	}
	fmt.Println(err)
	if !errors.Is(err, ErrLocked) {
		return 1
	}
	return 0
}

// crashWriters is how many goroutines of the child write at once.
const crashWriters = 8

// crashChild writes verdicts from crashWriters goroutines until it is
// killed, printing each verification id to stdout once PutVerdict has
// acknowledged it.
func crashChild(path string) int {
	s, err := OpenBolt(path, &Options{Timeout: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 2
	}
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	agents := []string{"seller-1", "seller-2", "seller-3", "test-child", ""}
	var (
		mu   sync.Mutex
		out  = bufio.NewWriter(os.Stdout)
		wg   sync.WaitGroup
		fail = make(chan error, crashWriters)
	)
	for g := range crashWriters {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("%s-%d-%d", run, g, i)
				v := testVerdict(id, agents[(g+i)%len(agents)], i%3 != 0, time.Now())
				if err := s.PutVerdict(context.Background(), v); err != nil {
					fail <- err
					return
				}
				mu.Lock()
				out.WriteString(id + "\n")
				err := out.Flush()
				mu.Unlock()
				if err != nil {
					fail <- err
					return
				}
			}
		})
	}
	err = <-fail
	fmt.Fprintln(os.Stderr, "crash child:", err)
	return 2
}

// runCrashChild starts a child writing to path, SIGKILLs it at a random
// moment after its first acknowledgement and returns every id it
// acknowledged.
func runCrashChild(t *testing.T, path string, rng *rand.Rand) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting child: %v", err)
	}
	firstAck := make(chan struct{})
	lines := make(chan []string, 1)
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		var acked []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if len(acked) == 0 {
				close(firstAck)
			}
			acked = append(acked, sc.Text())
		}
		lines <- acked
	}()
	select {
	case <-firstAck:
	case <-eof:
		_ = cmd.Wait()
		t.Fatalf("child ended before acknowledging anything; stderr: %s", stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("child acknowledged nothing in 30s; stderr: %s", stderr.String())
	}
	time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("killing child: %v", err)
	}
	acked := <-lines // the pipe closes when the child dies
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("child ended with %v before it was killed; stderr: %s", err, stderr.String())
	}
	return acked
}

// TestCrashKeepsAcknowledgedVerdicts kills a writing child five times in a
// row on the same file; after each kill every verdict the child ever
// acknowledged must be there and the file must pass Verify.
func TestCrashKeepsAcknowledgedVerdicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	var acked []string
	for run := range 5 {
		got := runCrashChild(t, path, rng)
		acked = append(acked, got...)
		s, err := OpenBolt(path, &Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("run %d: reopening after kill: %v", run, err)
		}
		ctx := context.Background()
		missing := 0
		for _, id := range acked {
			v, err := s.Receipt(ctx, id)
			if err != nil || !strings.Contains(string(v.Receipt), id) {
				missing++
				if missing <= 5 {
					t.Errorf("run %d: acknowledged verdict %s: %v, receipt %s", run, id, err, v.Receipt)
				}
			}
		}
		if missing > 0 {
			t.Errorf("run %d: %d of %d acknowledged verdicts missing", run, missing, len(acked))
		}
		if err := s.Verify(ctx); err != nil {
			t.Errorf("run %d: Verify() = %v", run, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: child acknowledged %d verdicts before SIGKILL (%d in total)", run, len(got), len(acked))
	}
}
