package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// built is the verifier command, built once per test binary by
// buildVerifier and removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildVerifier builds the command from this checkout as a person's
// `go build` does (VCS stamping left to the go command's default, whatever
// GOFLAGS says) and returns the binary's path.
func buildVerifier(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "verifier-bin-"); built.err != nil {
			return
		}
		name := "verifier"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		built.path = filepath.Join(built.dir, name)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = &buildError{err: err, output: string(out)}
		}
	})
	if built.err != nil {
		t.Fatalf("building the verifier: %v", built.err)
	}
	return built.path
}

type buildError struct {
	err    error
	output string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.output }

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "1d592dd32d406743cc1f1d72e981db9bf08fec87"},
		{Key: "vcs.time", Value: "2026-11-30T23:29:43Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	for _, tt := range []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"go run in a checkout (nothing stamped)", "(devel)", nil, sourceVersion},
		{"go build in a checkout (commit stamped)", "v0.0.0-20261130232943-1d592dd32d40", vcs, sourceVersion},
		{"go build of a tagged, modified checkout", "v0.2.0+dirty", append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"}), sourceVersion},
		{"go build with -buildvcs=false", "(devel)", nil, sourceVersion},
		{"go install of a release", "v1.2.3", nil, "1.2.3"},
		{"go install of a commit", "v0.0.0-20261130232943-1d592dd32d40", nil, "0.0.0-20261130232943-1d592dd32d40"},
		{"no module version", "", nil, sourceVersion},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/verifier-dev/verifier", Version: tt.version}, Settings: tt.settings}
			if got := versionOf(info); got != tt.want {
				t.Errorf("versionOf(%s, %d settings) = %q, want %q", tt.version, len(tt.settings), got, tt.want)
			}
		})
	}
}

// TestVersionGoRunEqualsGoBuild: `go run .` and a `go build` binary of the
// same checkout report the same verifier_version. (Where the go command can
// stamp VCS data, as in a clone, the build carries the commit and go run
// does not.)
func TestVersionGoRunEqualsGoBuild(t *testing.T) {
	bin := buildVerifier(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fromBuild, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	fromRun, err := exec.CommandContext(ctx, "go", "run", ".", "version").Output()
	if err != nil {
		t.Fatalf("go run . version: %v", err)
	}
	if b, r := strings.TrimSpace(string(fromBuild)), strings.TrimSpace(string(fromRun)); b != r || b == "" {
		t.Errorf("go build binary says %q, go run says %q: want one non-empty version", b, r)
	}
}
