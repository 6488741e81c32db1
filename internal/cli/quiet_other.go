//go:build !linux

package cli

import "os"

// quietInput leaves the terminal as it is on systems other than Linux.
func quietInput(*os.File) (restore func()) { return func() {} }
