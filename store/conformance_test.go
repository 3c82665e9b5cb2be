package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/store/storetest"
)

// fixedNow is the stores' clock for purging: the scripted histories'
// start, so nothing they write is purged as past.
func fixedNow() time.Time { return storetest.T0 }

// TestConformanceBolt runs the store conformance suite on bbolt.
func TestConformanceBolt(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{Now: fixedNow})
		if err != nil {
			t.Fatalf("OpenBolt() error = %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestConformancePostgres runs the store conformance suite on PostgreSQL,
// a database of its own per test in the package's private cluster.
func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPostgres(t, pgtest.NewDatabase(t)) })
}

// openPostgres opens the store in the database at url, closed when the
// test ends.
func openPostgres(t *testing.T, url string) *store.Postgres {
	t.Helper()
	s, err := store.OpenPostgres(context.Background(), url, &store.PostgresOptions{Now: fixedNow})
	if err != nil {
		t.Fatalf("OpenPostgres() error = %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
