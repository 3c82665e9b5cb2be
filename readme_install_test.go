//go:build unix

package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeBlock returns the code block of README.md that follows the marker
// <!-- name --> and opens with ```lang; there must be exactly one.
func readmeBlock(t *testing.T, name, lang string) string {
	t.Helper()
	open := "<!-- " + name + " -->\n```" + lang + "\n"
	text := readme(t)
	if n := strings.Count(text, open); n != 1 {
		t.Fatalf("README.md holds %d blocks opening %q, want 1", n, open)
	}
	_, rest, _ := strings.Cut(text, open)
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("README.md's %s block does not close", name)
	}
	return block
}

// goEnvFor returns the environment that lets the go command, run with
// another HOME, use this one's caches, module download and settings.
func goEnvFor(t *testing.T, home string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var v map[string]string
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("go env -json: %v", err)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	for k, val := range v {
		env = append(env, k+"="+val)
	}
	return env
}

// runBash runs script with bash -e -o pipefail in dir and returns its
// stdout and stderr.
func runBash(t *testing.T, dir, script string, env []string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestReadmeInstallFromCheckout runs the README's go build line and its PATH
// note, as written, with an empty home: the binary lands in ~/.local/bin,
// the shell finds it there, and it answers --version and help.
func TestReadmeInstallFromCheckout(t *testing.T) {
	home := t.TempDir()
	script := readmeBlock(t, "install-build", "sh") + readmeBlock(t, "install-path", "sh") + "verifier help\n"
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runBash(t, wd, script, goEnvFor(t, home))
	if err != nil {
		t.Fatalf("the README's install lines failed: %v\nscript:\n%s\nstderr:\n%s", err, script, stderr)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "bin", "verifier")); err != nil {
		t.Errorf("after the README's go build: %v", err)
	}
	lines := strings.Split(stdout, "\n")
	if want := "verifier " + sourceVersion; lines[0] != want {
		t.Errorf("verifier --version's first line = %q, want %q", lines[0], want)
	}
	if !strings.Contains(stdout, "\nusage: verifier [--http ADDR]") || !strings.Contains(stdout, "\ncommands:\n") {
		t.Errorf("verifier help did not print the usage:\n%s", stdout)
	}
}

// fakeCurl stands for curl on PATH: it copies each URL's file from
// $FIXTURES into the current folder, and refuses URLs outside $WANT_BASE.
const fakeCurl = `#!/bin/sh
for a in "$@"; do
  case "$a" in
  http://*|https://*)
    echo "$a" >>"$CURL_LOG"
    [ "${a%/*}" = "$WANT_BASE" ] || { echo "curl: unexpected URL $a" >&2; exit 22; }
    cp "$FIXTURES/${a##*/}" . || exit 22 ;;
  esac
done
`

// TestReadmeInstallFromArchive runs the README's release-archive lines as
// written, with curl answering from a folder laid out as a GitHub release
// (an archive of a release build, checksums.txt with every platform's
// line): the checksum check passes, the binary lands in ~/.local/bin and
// reports the release's version. A tampered archive stops the lines at the
// check.
func TestReadmeInstallFromArchive(t *testing.T) {
	for _, tool := range []string{"bash", "sha256sum", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's archive lines need %s: %v", tool, err)
		}
	}
	script := readmeBlock(t, "install-archive", "sh")
	m := regexp.MustCompile(`(?m)^version=(\S+) os=(\S+) arch=(\S+)`).FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("the README's archive lines set no version=… os=… arch=…:\n%s", script)
	}
	version, goos, goarch := m[1], m[2], m[3]
	s := stamp{version, "0123456789abcdef0123456789abcdef01234567", "2026-12-07T10:00:00Z"}
	bin := buildStamped(t, s)
	archive := fmt.Sprintf("verifier_%s_%s_%s.tar.gz", version, goos, goarch)
	base := "https://github.com/verifier-dev/verifier/releases/download/v" + version

	for _, tamper := range []bool{false, true} {
		t.Run(fmt.Sprintf("tampered=%v", tamper), func(t *testing.T) {
			fixtures, home, work, tools := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
			data := tarGz(t, map[string]string{"verifier": bin, "LICENSE": "LICENSE", "README.md": "README.md"})
			var sums strings.Builder
			for _, name := range []string{archive, fmt.Sprintf("verifier_%s_windows_amd64.zip", version), fmt.Sprintf("verifier_%s_darwin_arm64.tar.gz", version)} {
				content := data
				if name != archive {
					content = []byte(name) // another platform's archive, not downloaded
				}
				sum := sha256.Sum256(content)
				fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
			}
			if tamper {
				data[len(data)/2] ^= 1
			}
			writeFile(t, filepath.Join(fixtures, archive), data, 0o644)
			writeFile(t, filepath.Join(fixtures, "checksums.txt"), []byte(sums.String()), 0o644)
			writeFile(t, filepath.Join(tools, "curl"), []byte(fakeCurl), 0o755)
			curlLog := filepath.Join(t.TempDir(), "curl.log")

			env := append(goEnvFor(t, home), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"),
				"FIXTURES="+fixtures, "WANT_BASE="+base, "CURL_LOG="+curlLog)
			stdout, stderr, err := runBash(t, work, script, env)
			installed := filepath.Join(home, ".local", "bin", "verifier")
			if tamper {
				if err == nil {
					t.Fatalf("the README's lines accepted a tampered archive:\n%s", stdout)
				}
				if !strings.Contains(stdout+stderr, archive+": FAILED") {
					t.Errorf("a tampered archive failed elsewhere than the checksum check:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
				}
				if _, err := os.Stat(installed); err == nil {
					t.Error("a tampered archive was installed")
				}
				return
			}
			if err != nil {
				t.Fatalf("the README's archive lines failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			if !strings.Contains(stdout, archive+": OK") {
				t.Errorf("the checksum check did not print %q:\n%s", archive+": OK", stdout)
			}
			urls, _ := os.ReadFile(curlLog)
			if got, want := strings.Fields(string(urls)), []string{base + "/checksums.txt", base + "/" + archive}; !slices.Equal(got, want) {
				t.Errorf("the README downloads %q, want %q", got, want)
			}
			out, err := exec.Command(installed, "--version").Output()
			if err != nil {
				t.Fatalf("%s --version: %v", installed, err)
			}
			if first, _, _ := strings.Cut(string(out), "\n"); first != "verifier "+version {
				t.Errorf("the installed binary says %q, want %q", first, "verifier "+version)
			}
		})
	}
}

// tarGz packs files (name in the archive → file on disk) as a release
// archive does: flat, the binary executable.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b, err := os.ReadFile(files[name])
		if err != nil {
			t.Fatal(err)
		}
		mode := int64(0o644)
		if name == "verifier" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(b)), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// fakeClaude stands for the claude command: it records each call's
// arguments, one per line, and an empty line after the call.
const fakeClaude = `#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >>"$CLAUDE_LOG"
echo >>"$CLAUDE_LOG"
`

// TestReadmeMCPClientConfigs: the README's claude mcp add lines (run as
// written, with a stand-in claude) and each client's JSON configuration
// name the same stdio command and arguments and the same HTTP URL, in each
// client's format; and that command with those arguments is an MCP server
// that lists verify_schema.
func TestReadmeMCPClientConfigs(t *testing.T) {
	tools, logDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(tools, "claude"), []byte(fakeClaude), 0o755)
	claudeLog := filepath.Join(logDir, "claude.log")
	env := append(os.Environ(), "HOME=/home/you", "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"), "CLAUDE_LOG="+claudeLog)
	if _, stderr, err := runBash(t, t.TempDir(), readmeBlock(t, "mcp-claude-code", "sh"), env); err != nil {
		t.Fatalf("the README's claude mcp add lines failed: %v\n%s", err, stderr)
	}
	logged, err := os.ReadFile(claudeLog)
	if err != nil {
		t.Fatal(err)
	}
	var stdioCmd []string // the command and its arguments
	var httpURL string
	for _, call := range strings.Split(strings.TrimSuffix(string(logged), "\n\n"), "\n\n") {
		args := strings.Split(call, "\n")
		if len(args) < 3 || args[0] != "mcp" || args[1] != "add" {
			t.Fatalf("the README runs claude %q, want claude mcp add …", args)
		}
		if i := slices.Index(args, "--"); i >= 0 {
			if args[i-1] != "verifier" {
				t.Errorf("claude mcp add %q: the stdio entry is named %q, want verifier", args[2:], args[i-1])
			}
			stdioCmd = args[i+1:]
			continue
		}
		if i := slices.Index(args, "--transport"); i >= 0 && args[i+1] == "http" && len(args) >= i+4 {
			if name := args[len(args)-2]; name != "verifier-http" {
				t.Errorf("claude mcp add %q: the HTTP entry is named %q, want verifier-http", args[2:], name)
			}
			httpURL = args[len(args)-1]
			continue
		}
		t.Errorf("claude mcp add %q is neither a stdio (--) nor an HTTP (--transport http) entry", args[2:])
	}
	if len(stdioCmd) == 0 || !filepath.IsAbs(stdioCmd[0]) || filepath.Base(stdioCmd[0]) != "verifier" {
		t.Fatalf("the README's stdio entry for Claude Code runs %q, want an absolute path to verifier", stdioCmd)
	}
	if httpURL != "http://127.0.0.1:8080/mcp" {
		t.Errorf("the README's HTTP entry for Claude Code is %q, want http://127.0.0.1:8080/mcp", httpURL)
	}

	type entry struct {
		Type    string    `json:"type"`
		Command string    `json:"command"`
		Args    *[]string `json:"args"`
		URL     string    `json:"url"`
	}
	for _, tt := range []struct {
		client   string
		key      string // the member holding the servers
		typed    bool   // entries carry "type"
		withHTTP bool   // the configuration has the verifier-http entry
	}{
		{"cursor", "mcpServers", false, true},
		{"vscode", "servers", true, true},
		{"claude-desktop", "mcpServers", false, false},
	} {
		t.Run(tt.client, func(t *testing.T) {
			block := readmeBlock(t, "mcp-config "+tt.client, "json")
			var doc map[string]map[string]entry
			dec := json.NewDecoder(strings.NewReader(block))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("the README's %s configuration does not parse: %v\n%s", tt.client, err, block)
			}
			servers, ok := doc[tt.key]
			if !ok || len(doc) != 1 {
				t.Fatalf("the README's %s configuration has members %v, want only %q", tt.client, keys(doc), tt.key)
			}
			stdio, ok := servers["verifier"]
			if !ok {
				t.Fatalf("the README's %s configuration has no verifier entry", tt.client)
			}
			wantType := ""
			if tt.typed {
				wantType = "stdio"
			}
			if stdio.Args == nil {
				t.Errorf("%s: the verifier entry has no args", tt.client)
			} else if got := append([]string{stdio.Command}, *stdio.Args...); !slices.Equal(got, stdioCmd) || stdio.Type != wantType {
				t.Errorf("%s: the verifier entry runs %q (type %q), want %q (type %q) as for Claude Code", tt.client, got, stdio.Type, stdioCmd, wantType)
			}
			h, ok := servers["verifier-http"]
			if ok != tt.withHTTP {
				t.Fatalf("%s: verifier-http entry present = %v, want %v", tt.client, ok, tt.withHTTP)
			}
			if ok {
				if wantType != "" {
					wantType = "http"
				}
				if h.URL != httpURL || h.Type != wantType || h.Command != "" {
					t.Errorf("%s: the verifier-http entry is %+v, want url %q and type %q as for Claude Code", tt.client, h, httpURL, wantType)
				}
			}
			if len(servers) != 1+btoi(tt.withHTTP) {
				t.Errorf("%s: entries %v, want verifier and verifier-http only", tt.client, keys(servers))
			}
		})
	}

	// The command the entries name, with their arguments, serves MCP.
	bin := buildVerifier(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, stdioCmd[1:]...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewScanner(out)
	answers.Buffer(nil, 1<<20)
	var got []string
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		io.WriteString(in, msg+"\n")
		if strings.Contains(msg, `"id"`) {
			if !answers.Scan() {
				t.Fatalf("%s %q: no answer to %s\n%s", bin, stdioCmd[1:], msg, &stderr)
			}
			got = append(got, answers.Text())
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s %q after stdin closed: %v\n%s", bin, stdioCmd[1:], err, &stderr)
	}
	if !strings.Contains(got[0], `"serverInfo"`) || !strings.Contains(got[1], `"verify_schema"`) {
		t.Errorf("the configured command does not answer as an MCP server:\n%s", strings.Join(got, "\n"))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
