package store

import (
	"encoding/binary"

	"golang.org/x/mod/sumdb/tlog"
)

// tileLeaves returns the number of leaves under the last hash of tile t,
// which a tree must hold to serve it; ok is false for a tile this log
// never serves (another height, a negative level or index, a width out of
// 1…2^TileHeight, beyond 2^56 leaves).
func tileLeaves(t tlog.Tile) (leaves int64, ok bool) {
	if t.H != TileHeight || t.L < 0 || t.W < 1 || t.W > 1<<TileHeight || t.N < 0 || t.L*TileHeight >= 56 ||
		t.N > (1<<56)>>(TileHeight*(t.L+1)) {
		return 0, false
	}
	return (t.N<<TileHeight + int64(t.W)) << (TileHeight * t.L), true
}

// entryBundleInRange reports whether entry bundle n of width entries is one
// this log may serve: n in 0…2^48, width in 1…2^TileHeight.
func entryBundleInRange(n int64, width int) bool {
	return n >= 0 && n <= 1<<48 && width >= 1 && width <= 1<<TileHeight
}

// appendBundleEntry appends one record of a C2SP tlog-tiles entry bundle:
// the entry's 2-byte big-endian length, then the entry.
func appendBundleEntry(bundle, entry []byte) []byte {
	bundle = binary.BigEndian.AppendUint16(bundle, uint16(len(entry)))
	return append(bundle, entry...)
}
