//go:build linux

package spawn

import "syscall"

func deathSignalOf(a *syscall.SysProcAttr) syscall.Signal { return a.Pdeathsig }

func expectDeathSignal(sig syscall.Signal) syscall.Signal { return sig }
