package discover

import (
	"encoding/binary"
	"hash/maphash"
)

// Sum identifies a version of a file's content within one process: two
// contents have the same Sum only if they are equal (but for a chance of
// about 2^-64 per pair against contents chosen without knowing the
// process's random seeds). It is not a cryptographic digest and not
// stable across processes: it is never stored or sent.
type Sum [16]byte

// The seeds of SumOf, random per process.
var sumSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// SumOf returns the Sum of b.
//
// Why not SHA-256, as before: the sum only tells versions of a file apart
// in one process (the cache of a hot reload, a reload's list of changed
// files, a call asking whether its file changed), and hashing Python's
// standard library with SHA-256 took about 3% of listing it; the
// runtime's AES-based hash is several times faster.
func SumOf(b []byte) Sum {
	var s Sum
	binary.LittleEndian.PutUint64(s[:8], maphash.Bytes(sumSeeds[0], b))
	binary.LittleEndian.PutUint64(s[8:], maphash.Bytes(sumSeeds[1], b))
	return s
}
