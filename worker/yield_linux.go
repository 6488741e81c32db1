package worker

import "syscall"

// osYield gives the CPU to another runnable thread, if there is one.
// (A raw system call: sched_yield does not block.)
func osYield() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
