//go:build !unix

package worker

import "errors"

var errNoPipes = errors.New("python workers need a Unix system")

func rawPipe() (r, w int, err error)                   { return -1, -1, errNoPipes }
func setNonblock(fd int) error                         { return errNoPipes }
func closeFD(fd int)                                   {}
func readFD(fd int, b []byte) (int, bool, error)       { return 0, false, errNoPipes }
func writeKick(fd int)                                 {}
func drainKicks(fd int)                                {}
func pollIn(fd, kick int, timeoutMs int) (kicked bool) { return false }
func dupCloexec(fd int) (int, error)                   { return -1, errNoPipes }
