package payment

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/bits"
	"strings"
)

// checkEVMAddress accepts a 20-byte 0x address: all lower case, all upper
// case, or mixed case with a valid EIP-55 checksum (a mixed-case address
// with a wrong checksum is a typo, and clients refuse to pay it).
func checkEVMAddress(a string) error {
	if len(a) != 42 || !strings.HasPrefix(a, "0x") {
		return errors.New("not a 0x address of 40 hex digits")
	}
	if _, err := hex.DecodeString(a[2:]); err != nil {
		return errors.New("not a 0x address of 40 hex digits")
	}
	body := a[2:]
	if body == strings.ToLower(body) || body == strings.ToUpper(body) {
		return nil
	}
	if checksumAddress(a) != a {
		return errors.New("mixed-case address with a wrong EIP-55 checksum (mistyped?)")
	}
	return nil
}

// checksumAddress is the EIP-55 form of a valid 0x address.
func checksumAddress(a string) string {
	lower := strings.ToLower(a[2:])
	h := keccak256([]byte(lower))
	out := []byte("0x" + lower)
	for i := range lower {
		nibble := h[i/2] >> 4
		if i%2 == 1 {
			nibble = h[i/2] & 0x0f
		}
		if c := lower[i]; c >= 'a' && c <= 'f' && nibble >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// sameEVMAddress compares two 0x addresses case-insensitively.
func sameEVMAddress(a, b string) bool { return strings.EqualFold(a, b) }

// checkSolanaAddress accepts a base58 public key of 32 bytes.
func checkSolanaAddress(a string) error {
	b, err := base58Decode(a)
	if err != nil {
		return err
	}
	if len(b) != 32 {
		return errors.New("not a Solana public key (32 bytes in base58)")
	}
	return nil
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58Decode decodes Bitcoin-alphabet base58 (Solana addresses).
func base58Decode(s string) ([]byte, error) {
	if s == "" || len(s) > 64 {
		return nil, errors.New("not a base58 string of 1 to 64 characters")
	}
	out := []byte{} // big-endian big number, grown as needed
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base58Alphabet, s[i])
		if d < 0 {
			return nil, errors.New("not base58 (characters 0, O, I and l are not used)")
		}
		carry := d
		for j := len(out) - 1; j >= 0; j-- {
			carry += int(out[j]) * 58
			out[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			out = append([]byte{byte(carry)}, out...)
			carry >>= 8
		}
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	return append(make([]byte, zeros), out...), nil
}

// keccak256 is Ethereum's Keccak-256 (the original padding, not SHA3-256).
func keccak256(data []byte) [32]byte {
	const rate = 136
	var st [25]uint64
	block := make([]byte, rate)
	for len(data) >= rate {
		absorb(&st, data[:rate])
		data = data[rate:]
	}
	clear(block)
	copy(block, data)
	block[len(data)] ^= 0x01
	block[rate-1] ^= 0x80
	absorb(&st, block)
	var out [32]byte
	for i := range 4 {
		binary.LittleEndian.PutUint64(out[8*i:], st[i])
	}
	return out
}

func absorb(st *[25]uint64, block []byte) {
	for i := 0; i < len(block)/8; i++ {
		st[i] ^= binary.LittleEndian.Uint64(block[8*i:])
	}
	keccakF1600(st)
}

var keccakRC = [24]uint64{
	0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
	0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
	0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
	0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
	0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
	0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
}

// keccakRot and keccakPi drive the rho and pi steps, in the order of the
// reference implementation's single walk over the lanes.
var (
	keccakRot = [24]int{1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44}
	keccakPi  = [24]int{10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1}
)

func keccakF1600(a *[25]uint64) {
	var c [5]uint64
	for round := range 24 {
		for x := range 5 {
			c[x] = a[x] ^ a[x+5] ^ a[x+10] ^ a[x+15] ^ a[x+20]
		}
		for x := range 5 {
			d := c[(x+4)%5] ^ bits.RotateLeft64(c[(x+1)%5], 1)
			for y := 0; y < 25; y += 5 {
				a[y+x] ^= d
			}
		}
		t := a[1]
		for i := range 24 {
			j := keccakPi[i]
			t, a[j] = a[j], bits.RotateLeft64(t, keccakRot[i])
		}
		for y := 0; y < 25; y += 5 {
			copy(c[:], a[y:y+5])
			for x := range 5 {
				a[y+x] = c[x] ^ (^c[(x+1)%5] & c[(x+2)%5])
			}
		}
		a[0] ^= keccakRC[round]
	}
}
