package store

import (
	"context"
	"errors"
	"net"
	"net/rpc"
	"path/filepath"
	"testing"
	"time"
)

// olderOwner serves the socket protocol as a verifier older than key
// records did: no AddSigningKey, SigningKeys or BindLog.
type olderOwner struct{}

func (olderOwner) Check(_ *RPCArgs, r *RPCReply) error { return nil }

// TestKeyCallsToAnOlderOwner: a key-record call to an owner that does not
// serve it is ErrNotSupported (so a newer process starts beside it), not
// a lost owner and not a failure of the store.
func TestKeyCallsToAnOlderOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := rpc.NewServer()
	if err := srv.RegisterName(rpcName, olderOwner{}); err != nil {
		t.Fatal(err)
	}
	go srv.Accept(ln)
	c, err := dialStore(path, time.Second, DefaultCallTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	_, bindErr := c.BindLog(ctx, LogIdentity{Origin: "o/log", PublicKey: make([]byte, 32)})
	_, keysErr := c.SigningKeys(ctx)
	for name, err := range map[string]error{
		"AddSigningKey": c.AddSigningKey(ctx, KeyRecord{KeyVersion: "v1-2026-12a", PublicKey: make([]byte, 32)}),
		"BindLog":       bindErr,
		"SigningKeys":   keysErr,
	} {
		if !errors.Is(err, ErrNotSupported) || errors.Is(err, ErrOwnerLost) {
			t.Errorf("%s to an older owner: error = %v, want ErrNotSupported", name, err)
		}
	}
}
