package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultDataDir(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"VERIFIER_DATA_DIR", map[string]string{"VERIFIER_DATA_DIR": "/data"}, "/data"},
		{"VERIFIER_DATA_DIR before XDG_DATA_HOME", map[string]string{"VERIFIER_DATA_DIR": "/data", "XDG_DATA_HOME": "/xdg"}, "/data"},
		{"XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/xdg"}, filepath.Join("/xdg", "verifier")},
		{"empty VERIFIER_DATA_DIR is unset", map[string]string{"VERIFIER_DATA_DIR": "", "XDG_DATA_HOME": "/xdg"}, filepath.Join("/xdg", "verifier")},
		{"neither", nil, filepath.Join(home, ".local", "share", "verifier")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := defaultDataDir(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("defaultDataDir = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDataDirEnvReachesSubcommands checks VERIFIER_DATA_DIR as the release
// image uses it: a subcommand without --data-dir keeps its keys there.
func TestDataDirEnvReachesSubcommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{
		"VERIFIER_DATA_DIR": dir,
		"XDG_DATA_HOME":     t.TempDir(), // where the key would go were the variable not read
		// no VERIFIER_SIGNING_KEY: the key store is used
	}
	getenv := func(k string) string { return env[k] }
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"keys", "rotate"}, strings.NewReader(""), &stdout, &stderr, getenv); err != nil {
		t.Fatalf("keys rotate: %v (%s)", err, stderr.String())
	}
	entries, err := os.ReadDir(filepath.Join(dir, "keys"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no key under VERIFIER_DATA_DIR/keys: %v %v", entries, err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"keys", "show"}, strings.NewReader(""), &stdout, &stderr, getenv); err != nil {
		t.Fatalf("keys show: %v (%s)", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "publicKeys") {
		t.Errorf("keys show: %s", stdout.String())
	}
}
