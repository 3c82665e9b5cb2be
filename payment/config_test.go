package payment

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

const (
	testPayTo    = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	testSolPayTo = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	testFeePayer = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
)

func TestKeccak256(t *testing.T) {
	// Known answers from viem's keccak256, around the 136-byte block size.
	tests := []struct {
		in   string
		want string
	}{
		{"", "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
		{"abc", "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"},
		{strings.Repeat("a", 135), "34367dc248bbd832f4e3e69dfaac2f92638bd0bbd18f2912ba4ef454919cf446"},
		{strings.Repeat("a", 136), "a6c4d403279fe3e0af03729caada8374b5ca54d8065329a3ebcaeb4b60aa386e"},
		{strings.Repeat("a", 137), "d869f639c7046b4929fc92a4d988a8b22c55fbadb802c0c66ebcd484f1915f39"},
		{strings.Repeat("a", 300), "5b7e0e47a96f32a88b4f14ca177982790807c40e1a105742ba0fc1babe1ef826"},
	}
	for _, tt := range tests {
		t.Run(tt.want[:8], func(t *testing.T) {
			h := keccak256([]byte(tt.in))
			if got := hex.EncodeToString(h[:]); got != tt.want {
				t.Errorf("keccak256(%d bytes) = %s, want %s", len(tt.in), got, tt.want)
			}
		})
	}
}

func TestEVMAddress(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		// EIP-55's own examples and the USDC contracts of the notes.
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", true},
		{"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", true},
		{"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", true},
		{"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", true},
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", true},
		{"0x036CbD53842c5426634e7929541eC2318f3dCF7e", true},
		{testPayTo, true},
		{strings.ToLower(testPayTo), true},
		{"0x" + strings.ToUpper(testPayTo[2:]), true},
		{"0x209693bc6afc0C5328bA36FaF03C514EF312287C", false}, // one letter's case flipped
		{"0x209693Bc6afc0C5328bA36FaF03C514EF312287", false},
		{"209693Bc6afc0C5328bA36FaF03C514EF312287C00", false},
		{"0x209693Bc6afc0C5328bA36FaF03C514EF312287G", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := checkEVMAddress(tt.addr)
			if (err == nil) != tt.ok {
				t.Errorf("checkEVMAddress = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestSolanaAddress(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", true},
		{"4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", true},
		{"11111111111111111111111111111111", true}, // the system program: 32 zero bytes
		{testSolPayTo, true},
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGG", false}, // too short for 32 bytes
		{"0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := checkSolanaAddress(tt.addr)
			if (err == nil) != tt.ok {
				t.Errorf("checkSolanaAddress = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestAtomicAmount(t *testing.T) {
	tests := []struct {
		price, want string
	}{
		{"0.02", "20000"}, {"0.01", "10000"}, {"1", "1000000"}, {"0.000001", "1"}, {"12.5", "12500000"},
		{"0", ""}, {"0.0000001", ""}, {"-1", ""}, {"1e3", ""}, {"", ""}, {".5", ""}, {"1.", ""}, {"$0.01", ""},
	}
	for _, tt := range tests {
		t.Run(tt.price, func(t *testing.T) {
			got, err := atomicAmount(tt.price)
			if tt.want == "" {
				if err == nil {
					t.Errorf("atomicAmount(%q) = %s, want an error", tt.price, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("atomicAmount(%q) = %s, %v, want %s", tt.price, got, err, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" for valid
	}{
		{"defaults: payment off", Config{}, ""},
		{"evm", Config{PayToEVM: testPayTo, FacilitatorURL: "http://127.0.0.1:1"}, ""},
		{"both pay-to", Config{PayToEVM: testPayTo, PayToSolana: testSolPayTo, FacilitatorURL: "https://f.example/x402", Network: Testnet}, ""},
		{"pay-to without facilitator", Config{PayToEVM: testPayTo}, "no --facilitator"},
		{"facilitator without pay-to", Config{FacilitatorURL: "https://f.example"}, "payment would stay off"},
		{"facilitator not http", Config{PayToEVM: testPayTo, FacilitatorURL: "ftp://f.example"}, "http(s) URL"},
		{"both networks", Config{Network: "mainnet,testnet"}, "--network"},
		{"unknown network", Config{Network: "base"}, "--network"},
		{"bad evm checksum", Config{PayToEVM: "0x209693bc6afc0C5328bA36FaF03C514EF312287C", FacilitatorURL: "http://f"}, "EIP-55"},
		{"bad solana", Config{PayToSolana: "0xabc", FacilitatorURL: "http://f"}, "--pay-to-solana"},
		{"zero price", Config{PriceVerify: "0"}, "--price-verify"},
		{"too precise price", Config{PriceScore: "0.0000001"}, "--price-score"},
		{"negative body limit", Config{FreeTierMaxBody: -1}, "body limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate = %v, want ErrConfig mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.FreePerDay != DefaultFreePerDay || c.PriceVerify != "0.02" || c.PriceScore != "0.01" || c.Network != Mainnet {
		t.Errorf("defaults = %+v", c)
	}
	if got := (Config{FreePerDay: -5}).withDefaults().freeLimit(); got != 0 {
		t.Errorf("freeLimit of a negative FreePerDay = %d, want 0", got)
	}
	if err := (Config{PayToEVM: testPayTo, FacilitatorURL: "http://f", FreeTierMaxBody: 2 << 20}).CheckBodyLimit(1 << 20); !errors.Is(err, ErrConfig) {
		t.Errorf("CheckBodyLimit above the hard limit = %v, want ErrConfig", err)
	}
	if err := (Config{PayToEVM: testPayTo, FacilitatorURL: "http://f"}).CheckBodyLimit(1 << 20); err != nil {
		t.Errorf("CheckBodyLimit with the default = %v", err)
	}
}

func TestChains(t *testing.T) {
	evm, svm := chains(Mainnet)
	if evm.Network != "eip155:8453" || evm.EIP712Name != "USD Coin" || svm.Network != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" {
		t.Errorf("mainnet = %+v %+v", evm, svm)
	}
	evm, svm = chains(Testnet)
	if evm.Network != "eip155:84532" || evm.EIP712Name != "USDC" || evm.Asset != "0x036CbD53842c5426634e7929541eC2318f3dCF7e" ||
		svm.Network != "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" || svm.Asset != "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" {
		t.Errorf("testnet = %+v %+v", evm, svm)
	}
}
