package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestClusterLifecycle starts a cluster of its own, uses a database over
// its unix socket (and no TCP port), and checks that Stop ends the server and removes its
// folder.
func TestClusterLifecycle(t *testing.T) {
	SkipIfMissing(t)
	c, err := Start()
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	ctx := context.Background()
	var url string
	t.Run("database", func(t *testing.T) { // its database is dropped before Stop
		url = c.NewDatabase(t)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatalf("connecting to %s: %v", url, err)
		}
		defer conn.Close(ctx)
		var db, fsync, listen string
		if err := conn.QueryRow(ctx, "SELECT current_database(), current_setting('fsync'), current_setting('listen_addresses')").Scan(&db, &fsync, &listen); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(url, "/"+db+"?") || fsync != "on" || listen != "" {
			t.Errorf("database, fsync, listen_addresses = %q, %q, %q, want the one of %s, on, none", db, fsync, listen, url)
		}
	})
	if _, err := os.Stat(filepath.Join(c.dir, ".s.PGSQL.5432")); err != nil {
		t.Errorf("no unix socket in the cluster folder: %v", err)
	}
	dir := c.dir
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop() error = %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster folder after Stop: stat error = %v, want not exist", err)
	}
	if _, err := pgx.Connect(ctx, url); err == nil {
		t.Errorf("connecting after Stop succeeded")
	}
}

// TestNewDatabase checks that each test gets a database of its own in the
// shared cluster, dropped when the test ends.
func TestNewDatabase(t *testing.T) {
	var names [2]string
	for i := range names {
		t.Run("db", func(t *testing.T) {
			url := NewDatabase(t)
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&names[i]); err != nil {
				t.Fatal(err)
			}
		})
	}
	if names[0] == "" || names[0] == names[1] {
		t.Fatalf("databases = %q, want two different names", names)
	}
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left int
	err = conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1 OR datname = $2", names[0], names[1]).Scan(&left)
	if err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d of the subtests' databases left after they ended, want 0", left)
	}
}

// TestMissingServerIsAnError checks that a machine without the server
// binaries gets an error from Start (which tests turn into a failure), not
// a cluster or a silent skip.
func TestMissingServerIsAnError(t *testing.T) {
	t.Setenv(BinEnv, filepath.Join(t.TempDir(), "no-such-bin"))
	c, err := Start()
	if err == nil {
		_ = c.Stop()
		t.Fatalf("Start() with %s pointing nowhere: error = nil", BinEnv)
	}
}

// TestFailedStartRemovesItsFolder checks that a Start whose initdb fails
// returns an error and leaves no cluster folder behind.
func TestFailedStartRemovesItsFolder(t *testing.T) {
	bin, tmp := t.TempDir(), t.TempDir()
	for _, name := range []string{"postgres", "initdb"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(bin, 0o755); err != nil { // the postgres user runs initdb when the tests run as root
		t.Fatal(err)
	}
	t.Setenv(BinEnv, bin)
	t.Setenv("TMPDIR", tmp)
	c, err := Start()
	if err == nil {
		_ = c.Stop()
		t.Fatal("Start() with an initdb that fails: error = nil")
	}
	if c != nil {
		t.Errorf("Start() = %v with error %v, want nil", c, err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary folder after a failed Start: %v", left)
	}
}

// TestSkipReason: without server binaries a test is skipped with a message
// naming how to run it, unless RequiredEnv makes PostgreSQL required.
func TestSkipReason(t *testing.T) {
	for _, tc := range []struct {
		name, bin, required string
		skip                bool
	}{
		{"missing, not required", "/nonexistent-pg-bin", "", true},
		{"missing, required", "/nonexistent-pg-bin", "1", false},
		{"missing, required set to another value", "/nonexistent-pg-bin", "yes", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(BinEnv, tc.bin)
			t.Setenv(RequiredEnv, tc.required)
			why := skipReason()
			if (why != "") != tc.skip {
				t.Fatalf("skipReason() = %q, want skip %v", why, tc.skip)
			}
			if tc.skip && !strings.Contains(why, RequiredEnv+"=1") {
				t.Errorf("skipReason() = %q, does not name %s=1", why, RequiredEnv)
			}
		})
	}
}
