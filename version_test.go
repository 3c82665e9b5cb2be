package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/internal/pgtest"
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
	code := pgtest.Main(m) // runs the tests, then stops the Postgres tests' cluster
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

// TestDescribeBuild: a value stamped with -ldflags wins over the build
// info's VCS data; without either the commit and date are unknown.
func TestDescribeBuild(t *testing.T) {
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "1d592dd32d406743cc1f1d72e981db9bf08fec87"},
			{Key: "vcs.time", Value: "2026-11-30T23:29:43Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, tt := range []struct {
		name  string
		stamp stamp
		info  *debug.BuildInfo
		want  buildDescription
	}{
		{"no build info", stamp{}, nil, buildDescription{Version: sourceVersion}},
		{"go run", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, buildDescription{Version: sourceVersion}},
		{"go build in a clone", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130232943-1d592dd32d40"}, Settings: vcs("false")},
			buildDescription{Version: sourceVersion, Commit: "1d592dd32d406743cc1f1d72e981db9bf08fec87", Date: "2026-11-30T23:29:43Z"}},
		{"go build of a modified clone", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130232943-1d592dd32d40+dirty"}, Settings: vcs("true")},
			buildDescription{Version: sourceVersion, Commit: "1d592dd32d406743cc1f1d72e981db9bf08fec87", Date: "2026-11-30T23:29:43Z", Modified: true}},
		{"go install of a release", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			buildDescription{Version: "1.2.3"}},
		{"release build (ldflags)", stamp{"1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-12-07T10:00:00Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("false")},
			buildDescription{Version: "1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-12-07T10:00:00Z"}},
		{"version stamped alone", stamp{version: "1.2.3"}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")},
			buildDescription{Version: "1.2.3", Commit: "1d592dd32d406743cc1f1d72e981db9bf08fec87", Date: "2026-11-30T23:29:43Z"}},
		{"stamped, no build info", stamp{"1.2.3", "abc", "2026-12-07T10:00:00Z"}, nil,
			buildDescription{Version: "1.2.3", Commit: "abc", Date: "2026-12-07T10:00:00Z"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Go, tt.want.Platform = runtime.Version(), platform
			if diff := cmp.Diff(tt.want, describeBuild(tt.stamp, tt.info)); diff != "" {
				t.Errorf("describeBuild (-want +got):\n%s", diff)
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
	b, _, _ := strings.Cut(string(fromBuild), "\n")
	r, _, _ := strings.Cut(string(fromRun), "\n")
	if b != r || !strings.HasPrefix(b, "verifier ") {
		t.Errorf("go build binary says %q, go run says %q: want one \"verifier VERSION\"", b, r)
	}
}

// TestVersionShowsBuildInfoCommit: a `go build` binary names the commit the
// go command recorded in it (go version -m), or "unknown" where it recorded
// none (no .git directory, as in a git worktree, or -buildvcs=false).
func TestVersionShowsBuildInfoCommit(t *testing.T) {
	bin := buildVerifier(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	meta, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	wantCommit, wantDate := "unknown", "unknown"
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "build" {
			continue
		}
		if k, v, ok := strings.Cut(f[1], "="); ok {
			switch k {
			case "vcs.revision":
				wantCommit = v
			case "vcs.time":
				wantDate = v
			case "vcs.modified":
				if v == "true" {
					wantCommit += " (with uncommitted changes)"
				}
			}
		}
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		t.Fatalf("verifier --version: %v", err)
	}
	for _, want := range []string{"commit:   " + wantCommit + "\n", "date:     " + wantDate + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verifier --version printed\n%s\nwant a line %q (go version -m:\n%s)", out, strings.TrimSpace(want), meta)
		}
	}
}

// stamped holds the binaries built by buildStamped.
var stamped struct {
	sync.Mutex
	bins map[stamp]string
}

// buildStamped builds the command with the release build's ldflags and s's
// values, once per test binary and stamp.
func buildStamped(t *testing.T, s stamp) string {
	t.Helper()
	buildVerifier(t) // makes built.dir, which TestMain removes
	stamped.Lock()
	defer stamped.Unlock()
	if bin, ok := stamped.bins[s]; ok {
		return bin
	}
	bin := filepath.Join(built.dir, fmt.Sprintf("verifier-%d", len(stamped.bins)), "verifier")
	ldflags := "-s -w -X main.version=" + s.version + " -X main.commit=" + s.commit + " -X main.date=" + s.date
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags %q: %v\n%s", ldflags, err, out)
	}
	if stamped.bins == nil {
		stamped.bins = map[stamp]string{}
	}
	stamped.bins[s] = bin
	return bin
}

// TestReleaseLdflags builds the binary with the ldflags the release
// configuration passes and checks that each stamp shows: in --version, and
// the version in every answer's verifier_version.
func TestReleaseLdflags(t *testing.T) {
	s := stamp{"1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-12-07T10:00:00Z"}
	bin := buildStamped(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		t.Fatalf("verifier --version: %v", err)
	}
	for _, want := range []string{"verifier " + s.version + "\n", "commit:   " + s.commit + "\n", "date:     " + s.date + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verifier --version printed\n%s\nwant a line %q", out, strings.TrimSpace(want))
		}
	}
	cmd := exec.CommandContext(ctx, bin, "verify", "--data-dir", t.TempDir(), filepath.Join("testdata", "invoice-pass.json"))
	answer, err := cmd.Output()
	if err != nil {
		t.Fatalf("verifier verify: %v", err)
	}
	var got struct {
		Version string `json:"verifier_version"`
	}
	if err := json.Unmarshal(answer, &got); err != nil || got.Version != s.version {
		t.Errorf("the answer's verifier_version = %q (%v), want %q", got.Version, err, s.version)
	}
}
