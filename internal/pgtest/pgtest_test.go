package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestClusterLifecycle starts a cluster of its own, uses a database over
// the loopback port, and checks that Stop ends the server and removes its
// folder.
func TestClusterLifecycle(t *testing.T) {
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
	url, err := c.CreateDatabase(ctx, "lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	var db, fsync string
	if err := conn.QueryRow(ctx, "SELECT current_database(), current_setting('fsync')").Scan(&db, &fsync); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if db != "lifecycle" || fsync != "on" {
		t.Errorf("database, fsync = %q, %q, want lifecycle, on", db, fsync)
	}
	if _, err := os.Stat(filepath.Join(c.SocketDir(), ".s.PGSQL."+strconv.Itoa(c.Port()))); err != nil {
		t.Errorf("no unix socket in the cluster folder: %v", err)
	}
	if err := c.DropDatabase(ctx, "lifecycle"); err != nil {
		t.Fatal(err)
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

func TestCreateDatabaseRefusesOddNames(t *testing.T) {
	c := &Cluster{}
	for _, name := range []string{"", "A", "a;drop", "a-b", "1a", string(make([]byte, 64))} {
		if _, err := c.CreateDatabase(context.Background(), name); err == nil {
			t.Errorf("CreateDatabase(%q) error = nil, want a refusal", name)
		}
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
