package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/store"
)

// TestStdioWithoutStoreSaysWhy: when the store cannot be had — its file
// locked by a program that serves no socket — a stdio server still
// verifies, and every answer that needs the store gives the cause and the
// fix instead of a bare "unavailable".
func TestStdioWithoutStoreSaysWhy(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func(t *testing.T, file string) // makes the store unusable
		want []string                        // in every answer that needs the store
	}{
		{"locked by a program that serves no socket", func(t *testing.T, file string) {
			held, err := store.OpenBolt(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { held.Close() })
		}, []string{"locked by another process", store.SocketName, "stop the program holding", "--data-dir"}},
		{"corrupt", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte("not a bbolt file, not at all, and long enough to be read as one"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"corrupt", "aside (keep it to inspect)", "--data-dir"}},
	} {
		t.Run(tt.name, func(t *testing.T) { stdioWithoutStore(t, tt.make, tt.want) })
	}
}

func stdioWithoutStore(t *testing.T, makeUnusable func(*testing.T, string), wantCause []string) {
	dir := t.TempDir()
	makeUnusable(t, filepath.Join(dir, storeFile))
	inW, outR, stderr, done := startStdio(dir)
	c := newMCPLines(inW, outR)
	if err := c.handshake(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	record, err := c.call("get_verification_record", `{"agent_id":"seller-7"}`)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Code, Message string }
	if err := json.Unmarshal(record.Structured, &e); err != nil || !record.IsError || e.Code != "unavailable" {
		t.Fatalf("get_verification_record = %s, want the unavailable error", record.Structured)
	}
	req, err := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	verified, err := c.call("verify_schema", string(req))
	if err != nil || verified.IsError || len(verified.Content) == 0 {
		t.Fatalf("verify_schema = %+v, %v: want the answer", verified, err)
	}
	t.Logf("get_verification_record: %s", e.Message)
	for _, w := range wantCause {
		if !strings.Contains(e.Message, w) {
			t.Errorf("get_verification_record message %q lacks %q", e.Message, w)
		}
		if !strings.Contains(verified.Content[0].Text, "NOT recorded") || !strings.Contains(verified.Content[0].Text, w) {
			t.Errorf("verify_schema text %q: want it to say the verdict was not recorded, with %q", verified.Content[0].Text, w)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("run = %v\n%s", err, stderr.String())
	}
}
