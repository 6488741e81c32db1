package sandbox

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A Write run changes the workspace in place, so there is no layer of its
// own to cap. Its disk budget is counted instead with the kernel's I/O
// accounting of each process (/proc/PID/io, CONFIG_TASK_IO_ACCOUNTING):
// write_bytes is what a process made dirty in the page cache, that is what
// it sends to storage (written through write, mmap or fallocate'd pages it
// touched; tmpfs, pipes and sockets do not count), and
// cancelled_write_bytes what it truncated or deleted before writeback. A
// parent's count holds the children it has reaped, so the run's total is
// the init's count plus its live descendants'. lcp reads it with the
// other counters (budgetPoll); see docs/decisions.md for what it does not
// bound.

// procWrites returns write_bytes and cancelled_write_bytes of a process;
// ok is false when the process is gone or its counters cannot be read.
func procWrites(pid int) (written, cancelled int64, ok bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "write_bytes":
			written, ok = n, true
		case "cancelled_write_bytes":
			cancelled = n
		}
	}
	return written, cancelled, ok
}

// ioAccounting reports whether this kernel keeps per-process I/O
// accounting.
func ioAccounting() bool {
	_, _, ok := procWrites(os.Getpid())
	return ok
}

// runWrites returns the bytes the run rooted at the init pid has written
// to storage, net of what it cancelled: the init's count (which holds
// every descendant it reaped) plus its live descendants', found in the
// run's pids group when it has one, else by their parent pids.
func (g *budget) runWrites(init int) int64 {
	var written, cancelled int64
	for _, pid := range g.runPids(init) {
		if w, c, ok := procWrites(pid); ok {
			written += w
			cancelled += c
		}
	}
	return max(written-cancelled, 0)
}

// runPids lists the init and its live descendants.
func (g *budget) runPids(init int) []int {
	if g.group != nil {
		if pids := groupPids(g.group.pids); len(pids) > 0 {
			return pids
		}
	}
	return descendants(init)
}

// groupPids reads a group's cgroup.procs.
func groupPids(dir string) []int {
	raw, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// descendants returns root and every live process below it, from the
// parent pids in /proc/PID/stat.
func descendants(root int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return []int{root}
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := map[int][]int{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
