package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/store"
)

// logOf returns the store's log, failing the test when it keeps none.
func logOf(t *testing.T, s store.Store) store.Log {
	t.Helper()
	l, ok := store.LogOf(s)
	if !ok {
		t.Fatalf("store %T keeps no transparency log", s)
	}
	return l
}

// WantLogEntry is the log entry of receipt computed by the reference RFC
// 8785 implementation (gowebpki/jcs), not by the store's canonicalizer.
func WantLogEntry(t testing.TB, receipt []byte) [sha256.Size]byte {
	t.Helper()
	canonical, err := jcs.Transform(receipt)
	if err != nil {
		t.Fatalf("jcs.Transform(receipt) error = %v", err)
	}
	return sha256.Sum256(canonical)
}

// CheckLogged checks that the log holds exactly the verdicts vs, each at
// a distinct index, its entry the SHA-256 of its receipt's RFC 8785 form,
// with an inclusion proof that tlog.CheckRecord and transparency-dev/merkle's
// independent RFC 6962 verifier both accept against the log's root.
func CheckLogged(t testing.TB, l store.Log, vs []store.Verdict) {
	t.Helper()
	ctx := context.Background()
	tree, err := l.LogTree(ctx)
	if err != nil {
		t.Fatalf("LogTree() error = %v", err)
	}
	if tree.Size != int64(len(vs)) {
		t.Fatalf("log size = %d, want %d (one entry per stored verdict)", tree.Size, len(vs))
	}
	seen := make(map[int64]string)
	for _, v := range vs {
		inc, err := l.LogInclusion(ctx, v.VerificationID)
		if err != nil {
			t.Fatalf("LogInclusion(%q) error = %v", v.VerificationID, err)
		}
		if other, dup := seen[inc.Index]; dup {
			t.Fatalf("verdicts %q and %q share log index %d", other, v.VerificationID, inc.Index)
		}
		seen[inc.Index] = v.VerificationID
		if index, err := l.LogIndex(ctx, v.VerificationID); err != nil || index != inc.Index {
			t.Errorf("LogIndex(%q) = %d, %v; want %d as LogInclusion says", v.VerificationID, index, err, inc.Index)
		}
		if inc.Entry != WantLogEntry(t, v.Receipt) {
			t.Errorf("%q: log entry %x, want SHA-256 of its receipt's RFC 8785 form", v.VerificationID, inc.Entry)
		}
		if inc.Tree != tree {
			t.Fatalf("%q: proved against %+v, the log is %+v", v.VerificationID, inc.Tree, tree)
		}
		leaf := tlog.RecordHash(inc.Entry[:])
		if err := tlog.CheckRecord(inc.Proof, inc.Tree.Size, inc.Tree.Hash, inc.Index, leaf); err != nil {
			t.Errorf("%q: tlog.CheckRecord() error = %v", v.VerificationID, err)
		}
		path := make([][]byte, len(inc.Proof))
		for i := range inc.Proof {
			path[i] = inc.Proof[i][:]
		}
		err = proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(inc.Index), uint64(inc.Tree.Size),
			rfc6962.DefaultHasher.HashLeaf(inc.Entry[:]), path, inc.Tree.Hash[:])
		if err != nil {
			t.Errorf("%q: merkle proof.VerifyInclusion() error = %v", v.VerificationID, err)
		}
	}
}

// testLogEveryStoredVerdict: verdicts stored one by one, concurrently and
// through SettlePayment each get one log entry with a verifiable
// inclusion proof; a replayed identical verdict adds none, nor does one
// refused as a duplicate; an id never stored has no entry.
func testLogEveryStoredVerdict(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	l := logOf(t, s)
	if tree, err := l.LogTree(ctx); err != nil || tree.Size != 0 || tree.Hash != emptyTree(t) {
		t.Fatalf("LogTree() of a new store = %+v, %v; want the empty tree", tree, err)
	}
	var vs []store.Verdict
	for i := range 5 {
		vs = append(vs, Verdict(fmt.Sprintf("seq-%d", i), []string{"agent-a", "", "test-x"}[i%3], i%2 == 0, T0.Add(time.Duration(i)*time.Second)))
	}
	Put(t, s, vs...)
	Put(t, s, vs[2]) // a replay of a stored verdict logs nothing
	other := Verdict("seq-1", "agent-a", false, T0)
	if err := s.PutVerdict(ctx, other); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("PutVerdict(same id, other bytes) error = %v, want ErrDuplicate", err)
	}

	const workers = 40
	concurrent := make([]store.Verdict, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		concurrent[i] = Verdict(fmt.Sprintf("conc-%02d", i), fmt.Sprintf("agent-%d", i%3), i%3 != 0, T0.Add(time.Minute))
		wg.Go(func() { errs[i] = s.PutVerdict(ctx, concurrent[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent PutVerdict error = %v", err)
	}
	vs = append(vs, concurrent...)

	exp := T0.Add(5 * time.Minute)
	if _, _, err := s.UsePayment(ctx, "0xpaid", exp, store.PaymentUse{State: store.PaymentPending, RequestKey: "r", Since: T0}); err != nil {
		t.Fatalf("UsePayment() error = %v", err)
	}
	paid := Verdict("paid-1", "agent-a", true, T0.Add(2*time.Minute))
	settled := store.PaymentUse{State: store.PaymentSettled, RequestKey: "r", Since: T0, Settlement: []byte(`{}`), Answer: []byte(`{}`)}
	if err := s.SettlePayment(ctx, "0xpaid", settled, &paid); err != nil {
		t.Fatalf("SettlePayment() error = %v", err)
	}
	vs = append(vs, paid)
	CheckLogged(t, l, vs)
	for _, id := range []string{"never-stored", "", string(make([]byte, 300))} {
		if _, err := l.LogInclusion(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LogInclusion(%.20q) error = %v, want ErrNotFound", id, err)
		}
		if _, err := l.LogIndex(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LogIndex(%.20q) error = %v, want ErrNotFound", id, err)
		}
	}
}

// emptyTree is RFC 6962's hash of the empty tree, SHA-256 of nothing.
func emptyTree(t *testing.T) tlog.Hash {
	t.Helper()
	return tlog.Hash(sha256.Sum256(nil))
}

// tileReader is a tlog.TileReader over a log's LogTile.
type tileReader struct{ l store.Log }

func (tileReader) Height() int { return store.TileHeight }

func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		data, err := r.l.LogTile(context.Background(), tile)
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// testLogTilesAndEntries: the tiles of a log of 300 verdicts (a full and
// a partial tile at level 0) let tlog.TileHashReader, which checks every
// tile against the tree hash, rebuild the root and prove a record; the
// entry bundles hold each verdict's entry, length-prefixed, in log order;
// tiles and bundles the tree does not cover yet are ErrNotFound.
func testLogTilesAndEntries(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	var vs []store.Verdict
	for i := range 300 {
		vs = append(vs, Verdict(fmt.Sprintf("t-%03d", i), "agent-a", true, T0.Add(time.Duration(i)*time.Second)))
	}
	Put(t, s, vs...) // one at a time: the log's order is vs's
	l := logOf(t, s)
	tree, err := l.LogTree(ctx)
	if err != nil || tree.Size != 300 {
		t.Fatalf("LogTree() = %+v, %v; want size 300", tree, err)
	}
	thr := tlog.TileHashReader(tlog.Tree{N: tree.Size, Hash: tree.Hash}, tileReader{l})
	root, err := tlog.TreeHash(tree.Size, thr)
	if err != nil || root != tree.Hash {
		t.Fatalf("root from tiles = %v, %v; want %v", root, err, tree.Hash)
	}
	p, err := tlog.ProveRecord(tree.Size, 257, thr)
	if err != nil {
		t.Fatalf("ProveRecord(257) from tiles error = %v", err)
	}
	entry := WantLogEntry(t, vs[257].Receipt)
	if err := tlog.CheckRecord(p, tree.Size, tree.Hash, 257, tlog.RecordHash(entry[:])); err != nil {
		t.Errorf("CheckRecord(proof from tiles) error = %v", err)
	}

	for _, c := range []struct {
		n     int64
		width int
		first int
	}{{0, 256, 0}, {1, 44, 256}, {1, 10, 256}} {
		bundle, err := l.LogEntries(ctx, c.n, c.width)
		if err != nil {
			t.Fatalf("LogEntries(%d, %d) error = %v", c.n, c.width, err)
		}
		if len(bundle) != c.width*34 {
			t.Fatalf("LogEntries(%d, %d) has %d bytes, want %d", c.n, c.width, len(bundle), c.width*34)
		}
		for i := range c.width {
			rec := bundle[i*34 : (i+1)*34]
			want := WantLogEntry(t, vs[c.first+i].Receipt)
			if rec[0] != 0 || rec[1] != 32 || string(rec[2:]) != string(want[:]) {
				t.Fatalf("LogEntries(%d, %d) entry %d = %x, want 0020%x", c.n, c.width, i, rec, want)
			}
		}
	}
	notYet := []tlog.Tile{
		{H: 8, L: 0, N: 1, W: 256}, // full tile 1: only 44 leaves
		{H: 8, L: 0, N: 2, W: 1},
		{H: 8, L: 1, N: 0, W: 2}, // needs 512 leaves
		{H: 8, L: -1, N: 0, W: 256},
		{H: 4, L: 0, N: 0, W: 16},
		{H: 8, L: 7, N: 0, W: 1},
		{H: 8, L: 0, N: -1, W: 1},
		{H: 8, L: 0, N: 0, W: 257},
	}
	for _, tile := range notYet {
		if _, err := l.LogTile(ctx, tile); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LogTile(%+v) error = %v, want ErrNotFound", tile, err)
		}
	}
	for _, c := range [][2]int64{{1, 45}, {2, 1}, {0, 0}, {0, 257}, {-1, 1}, {1 << 50, 1}} {
		if _, err := l.LogEntries(ctx, c[0], int(c[1])); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LogEntries(%d, %d) error = %v, want ErrNotFound", c[0], c[1], err)
		}
	}
}

// testLogReceipts: LogReceipts returns the stored compact receipts byte for
// byte in log order, ErrNotFound for a range the log does not hold in
// full and ErrInvalidArgument for a bad range.
func testLogReceipts(t *testing.T, open Open) {
	s, ctx := open(t), context.Background()
	rl := logOf(t, s)
	var vs []store.Verdict
	for i := range 7 {
		vs = append(vs, Verdict(fmt.Sprintf("r-%d", i), []string{"agent-a", ""}[i%2], i%3 == 0, T0.Add(-time.Duration(i)*time.Second)))
	}
	Put(t, s, vs...) // verified_at decreasing: log order is not time order
	for _, c := range [][2]int{{0, 7}, {2, 3}, {6, 1}} {
		got, err := rl.LogReceipts(ctx, int64(c[0]), c[1])
		if err != nil {
			t.Fatalf("LogReceipts(%d, %d) error = %v", c[0], c[1], err)
		}
		if len(got) != c[1] {
			t.Fatalf("LogReceipts(%d, %d) = %d receipts", c[0], c[1], len(got))
		}
		for i, r := range got {
			if want := vs[c[0]+i].Receipt; string(r) != string(want) {
				t.Errorf("LogReceipts(%d, %d)[%d] = %s, want %s", c[0], c[1], i, r, want)
			}
		}
	}
	for _, c := range []struct {
		first int64
		count int
		want  error
	}{{0, 8, store.ErrNotFound}, {7, 1, store.ErrNotFound}, {-1, 2, store.ErrInvalidArgument},
		{0, 0, store.ErrInvalidArgument}, {0, store.MaxLogReceipts + 1, store.ErrInvalidArgument}} {
		if _, err := rl.LogReceipts(ctx, c.first, c.count); !errors.Is(err, c.want) {
			t.Errorf("LogReceipts(%d, %d) error = %v, want %v", c.first, c.count, err, c.want)
		}
	}
}
