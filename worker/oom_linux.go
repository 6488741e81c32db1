package worker

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// oomMark is what the kernel had counted of out-of-memory kills when a
// worker started: system-wide (/proc/vmstat) and in the worker's cgroup
// (cgroup v2 memory.events), where readable.
type oomMark struct {
	events        string // the worker's cgroup memory.events, "" if unknown
	system, group uint64
	ok            bool
}

// markOOM reads the kernel's out-of-memory kill counters for a worker.
func markOOM(pid int) oomMark {
	var m oomMark
	m.system, m.ok = counterIn("/proc/vmstat", "oom_kill ")
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, found := strings.CutPrefix(line, "0::"); found {
				m.events = filepath.Join("/sys/fs/cgroup", rest, "memory.events")
				m.group, _ = counterIn(m.events, "oom_kill ")
			}
		}
	}
	return m
}

// oomSince says whether the kernel reports an out-of-memory kill since the
// mark, and where: "its cgroup" or "the system".
func (m oomMark) oomSince() (string, bool) {
	if m.events != "" {
		if n, ok := counterIn(m.events, "oom_kill "); ok && n > m.group {
			return "its cgroup", true
		}
	}
	if !m.ok {
		return "", false
	}
	if n, ok := counterIn("/proc/vmstat", "oom_kill "); ok && n > m.system {
		return "the system", true
	}
	return "", false
}

// counterIn returns the number after key on its line in a "key value" file.
func counterIn(path, key string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), key); found {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
