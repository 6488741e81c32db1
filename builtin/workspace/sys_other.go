//go:build !unix

package workspace

import "io/fs"

const nonblock = 0

func linkCount(fi fs.FileInfo) uint64 { return 1 }
