package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
// It reads with bare system calls into a stack buffer: it runs twice per
// call of a workspace-write worker, for each of the run's processes.
func procWrites(pid int) (written, cancelled int64, ok bool) {
	var path [32]byte
	p := strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10)
	p = append(p, "/io"...)
	var buf [512]byte
	raw, ok := readSmall(string(p), buf[:])
	if !ok {
		return 0, 0, false
	}
	ok = false
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		k, v, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		x, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			continue
		}
		switch string(k) {
		case "write_bytes":
			written, ok = x, true
		case "cancelled_write_bytes":
			cancelled = x
		}
	}
	return written, cancelled, ok
}

// readSmall reads a small file of /proc or a control group into buf
// with bare system calls (no descriptor for the runtime's poller): the
// bytes read, and whether the file could be read whole within buf.
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			return buf[:n], true
		}
		n += m
	}
	return buf[:n], false // full: there may be more
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
	var buf [1024]byte
	p := filepath.Join(dir, "cgroup.procs")
	raw, ok := readSmall(p, buf[:])
	if !ok {
		var err error
		if raw, err = os.ReadFile(p); err != nil {
			return nil
		}
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
