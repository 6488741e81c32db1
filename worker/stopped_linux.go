package worker

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// stoppedKnown says whether isStopped can tell.
const stoppedKnown = true

// isStopped reports whether process pid is stopped (state T, or t when
// traced), from /proc/pid/stat.
func isStopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	s := b[i+2]
	return s == 'T' || s == 't'
}

// startPids returns the processes of a worker still in its start-up: its
// guardian and the guardian's children (the worker, once forked), whose
// pid the engine learns only from the worker's hello.
func startPids(gpid int) []int {
	pids := []int{gpid}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(gpid) + "/task/" + strconv.Itoa(gpid) + "/children")
	if err != nil {
		return pids
	}
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killPids sends SIGKILL to each process.
func killPids(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
