package worker

import (
	"bytes"
	"os"
	"strconv"
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
