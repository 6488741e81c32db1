//go:build unix && !linux

package spawn

import "syscall"

func deathSignalOf(*syscall.SysProcAttr) syscall.Signal { return 0 }

func expectDeathSignal(syscall.Signal) syscall.Signal { return 0 }
