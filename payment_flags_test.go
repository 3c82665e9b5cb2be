package main

import (
	"flag"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
)

func TestPaymentFlags(t *testing.T) {
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const evm = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, g *payment.Gate)
	}{
		{"defaults: payment off, 1000 free", nil, "", func(t *testing.T, g *payment.Gate) {
			if g.PaymentOn() || g.Config().FreePerDay != 1000 || g.Config().Network != payment.Mainnet {
				t.Errorf("config = %+v", g.Config())
			}
		}},
		{"testnet payments", []string{"--pay-to-evm", evm, "--facilitator", "http://127.0.0.1:9", "--network", "testnet", "--price-verify", "0.05", "--trust-proxy"}, "",
			func(t *testing.T, g *payment.Gate) {
				if !g.PaymentOn() || g.Networks()[0] != "eip155:84532" || g.Price(payment.KindVerify) != "0.05" || !g.Config().TrustProxy {
					t.Errorf("config = %+v, networks %v", g.Config(), g.Networks())
				}
			}},
		{"no free calls", []string{"--free-per-day", "0"}, "", func(t *testing.T, g *payment.Gate) {
			if g.Config().FreePerDay >= 0 {
				t.Errorf("--free-per-day 0 gave FreePerDay %d, want none", g.Config().FreePerDay)
			}
		}},
		{"pay-to without facilitator", []string{"--pay-to-evm", evm}, "--facilitator", nil},
		{"both networks", []string{"--network", "both"}, "--network", nil},
		{"negative allowance", []string{"--free-per-day", "-3"}, "--free-per-day", nil},
		{"free tier above the hard limit", []string{"--pay-to-evm", evm, "--facilitator", "http://127.0.0.1:9", "--free-max-body", "9999999"}, "--free-max-body", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("verifier", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f paymentFlags
			f.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			g, err := f.gate(st, 4<<20, log)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("gate = %v, want an error about %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, g)
		})
	}
}
