//go:build !windows

package cli

// enableVT reports that the terminal processes escape sequences, as every
// terminal of these systems does.
func enableVT(uintptr) bool { return true }
