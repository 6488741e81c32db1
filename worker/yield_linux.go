package worker

import "syscall"

// osYield gives the CPU to another runnable thread, if there is one.
func osYield() { _, _, _ = syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
