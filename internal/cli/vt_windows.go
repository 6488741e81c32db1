//go:build windows

package cli

import "golang.org/x/sys/windows"

// enableVT turns on the console's processing of escape sequences (the
// status line and colour need it); false when the console cannot.
func enableVT(fd uintptr) bool {
	var mode uint32
	h := windows.Handle(fd)
	if windows.GetConsoleMode(h, &mode) != nil {
		return false
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
