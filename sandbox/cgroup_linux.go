package sandbox

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcptools/lcp/sandbox/internal/sbinit"
)

// cgroupRoot is where the control group hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// cgroupPrefix starts the name of a run's control group; the name goes
// on with the owning lcp's pid and start time, for recovery.
const cgroupPrefix = "lcp-sandbox-"

// initTasks is what the pids budget adds for the sandbox's init.
const initTasks = sbinit.InitTasks

// runGroup is the control group (or groups, in cgroup v1) a run's init
// and everything it starts is put in: the kernel counts the memory of
// every process, tmpfs page, shared map and memfd there, and its tasks.
type runGroup struct {
	version int    // 1 or 2
	mem     string // the memory group's folder ("" when not limited)
	pids    string // the pids group's folder (v1; in v2 the same as mem)
	dirs    []string
}

// ownCgroups returns this process's control group paths by controller
// ("memory", "pids"; "" for the v2 unified group), from /proc/self/cgroup.
func ownCgroups() map[string]string {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// groupParents returns the folders under which a run's groups are made:
// v1's memory and pids hierarchies under this process's own groups, else
// a cgroup v2 group of this process whose memory and pids controllers are
// delegated to its children. ok is false when neither is there.
func groupParents() (version int, mem, pids string, ok bool) {
	own := ownCgroups()
	if m, p := own["memory"], own["pids"]; m != "" && p != "" {
		mem, pids = filepath.Join(cgroupRoot, "memory", m), filepath.Join(cgroupRoot, "pids", p)
		if isDir(mem) && isDir(pids) {
			return 1, mem, pids, true
		}
	}
	if dir := leafParent(); dir != "" {
		return 2, dir, dir, true
	}
	if dir, ok := ownV2Dir(own); ok {
		sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err == nil {
			fields := strings.Fields(string(sub))
			if contains(fields, "memory") && contains(fields, "pids") {
				return 2, dir, dir, true
			}
		}
	}
	return 0, "", "", false
}

// ownV2Dir returns the folder of this process's cgroup v2 group, from
// own (ownCgroups): under cgroupRoot, or its "unified" folder on a hybrid
// machine.
func ownV2Dir(own map[string]string) (string, bool) {
	u, has := own[""]
	if !has || u == "" {
		return "", false
	}
	base := cgroupRoot
	if _, err := os.Stat(filepath.Join(base, "cgroup.subtree_control")); err != nil {
		base = filepath.Join(cgroupRoot, "unified")
	}
	return filepath.Join(base, u), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// groupName returns a new run group's name: the prefix, this process's
// pid and start time, and random bytes.
func groupName() (string, error) {
	start, err := selfStart()
	if err != nil {
		return "", err
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s%d-%d-%s", cgroupPrefix, os.Getpid(), start, hex.EncodeToString(r[:])), nil
}

// newRunGroup makes the control groups of one run with the budget of l.
// It returns nil and no error where the kernel's accounting cannot be
// used (no writable hierarchy): the rlimits and tmpfs sizes bound the
// run then. A hierarchy that is there but refuses the limits is an error.
func newRunGroup(l Limits) (*runGroup, error) {
	version, memParent, pidsParent, ok := groupParents()
	if !ok {
		return nil, nil
	}
	name, err := groupName()
	if err != nil {
		return nil, err
	}
	g := &runGroup{version: version}
	mk := func(parent string) (string, error) {
		d := filepath.Join(parent, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
		g.dirs = append(g.dirs, d)
		return d, nil
	}
	if g.mem, err = mk(memParent); err != nil {
		if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
			return nil, nil // not ours to use: the fallback bounds the run
		}
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if version == 1 {
		if g.pids, err = mk(pidsParent); err != nil {
			g.remove()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	} else {
		g.pids = g.mem
	}
	if err := g.limit(l); err != nil {
		g.remove()
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return g, nil
}

func writeFile(p, v string) error {
	if err := os.WriteFile(p, []byte(v), 0); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(p), err)
	}
	return nil
}

// limit sets the memory and pids limits of the group.
func (g *runGroup) limit(l Limits) error {
	var errs []error
	if g.version == 1 {
		if l.TotalMemory > 0 {
			v := strconv.FormatInt(l.TotalMemory, 10)
			errs = append(errs, writeFile(filepath.Join(g.mem, "memory.limit_in_bytes"), v))
			// With swap, memory and swap together: a run must not move its
			// memory to swap instead.
			if _, err := os.Stat(filepath.Join(g.mem, "memory.memsw.limit_in_bytes")); err == nil {
				errs = append(errs, writeFile(filepath.Join(g.mem, "memory.memsw.limit_in_bytes"), v))
			}
		}
		if l.Processes > 0 {
			errs = append(errs, writeFile(filepath.Join(g.pids, "pids.max"), strconv.Itoa(l.Processes+initTasks)))
		}
		return errors.Join(errs...)
	}
	if l.TotalMemory > 0 {
		v := strconv.FormatInt(l.TotalMemory, 10)
		errs = append(errs, writeFile(filepath.Join(g.mem, "memory.max"), v))
		if _, err := os.Stat(filepath.Join(g.mem, "memory.swap.max")); err == nil {
			errs = append(errs, writeFile(filepath.Join(g.mem, "memory.swap.max"), "0"))
		}
	}
	if l.Processes > 0 {
		errs = append(errs, writeFile(filepath.Join(g.pids, "pids.max"), strconv.Itoa(l.Processes+initTasks)))
	}
	return errors.Join(errs...)
}

// place moves process pid (the init, before it starts the command) into
// the group.
func (g *runGroup) place(pid int) error {
	v := strconv.Itoa(pid)
	for _, d := range uniq(g.mem, g.pids) {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), v); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
	}
	return nil
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// usage is what the kernel counted for a run.
type usage struct {
	oomKills   int64 // processes the kernel killed for the memory budget
	pidsDenied int64 // forks refused for the pids budget
	peakMemory int64 // the most memory charged at once, in bytes
}

// read returns the group's counters.
func (g *runGroup) read() usage {
	var u usage
	if g.version == 1 {
		u.oomKills = keyed(filepath.Join(g.mem, "memory.oom_control"), "oom_kill")
		u.peakMemory = number(filepath.Join(g.mem, "memory.max_usage_in_bytes"))
	} else {
		u.oomKills = keyed(filepath.Join(g.mem, "memory.events"), "oom_kill")
		u.peakMemory = number(filepath.Join(g.mem, "memory.peak"))
	}
	u.pidsDenied = keyed(filepath.Join(g.pids, "pids.events"), "max")
	return u
}

// keyed reads the value of key in a file of "key value" lines.
func keyed(p, key string) int64 {
	raw, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func number(p string) int64 {
	raw, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	return n
}

// remove kills whatever is left in the group and removes it. A group
// whose last tasks are still exiting is removed a moment later, in the
// background; recovery removes what a crash left.
func (g *runGroup) remove() {
	if g == nil {
		return
	}
	dirs := g.dirs
	g.dirs = nil
	if len(dirs) == 0 {
		return
	}
	if rmdirs(dirs) == nil {
		return
	}
	go func() {
		for i := 0; i < 100; i++ {
			for _, d := range dirs {
				killGroup(d)
			}
			if rmdirs(dirs) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
}

func rmdirs(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if err := unix.Rmdir(d); err != nil && err != unix.ENOENT {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killGroup sends SIGKILL to every process in the group folder d.
func killGroup(d string) {
	raw, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(raw)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// sweepGroups removes the run groups, under this process's own groups,
// of lcp processes that are gone.
func sweepGroups(errs *[]error) []string {
	_, memParent, pidsParent, ok := groupParents()
	if !ok {
		return nil
	}
	var removed []string
	for _, parent := range uniq(memParent, pidsParent) {
		names, _ := readNames(parent)
		for _, n := range names {
			rest, ok := strings.CutPrefix(n, cgroupPrefix)
			if !ok {
				continue
			}
			parts := strings.Split(rest, "-")
			if len(parts) != 3 {
				continue
			}
			pid, err1 := strconv.Atoi(parts[0])
			start, err2 := strconv.ParseUint(parts[1], 10, 64)
			// This process's own groups are its live runs'.
			if err1 != nil || err2 != nil || pid == os.Getpid() || alive(pid, start) {
				continue
			}
			d := filepath.Join(parent, n)
			killGroup(d)
			if err := unix.Rmdir(d); err != nil && err != unix.ENOENT {
				*errs = append(*errs, fmt.Errorf("remove stale control group %s: %w", d, err))
				continue
			}
			removed = append(removed, d)
		}
	}
	return removed
}

// Accounting says what bounds the totals of a run on this machine, for
// this process: "cgroup v1" or "cgroup v2" when a run's control groups
// can be made (the budget is the kernel's), else "rlimits" (per process
// limits and tmpfs sizes, with UseLeafGroup's reason in parentheses when
// it was called and refused); "; no disk total" follows when the sandbox
// works but a copy-on-write run's layer has no size of its own (Probe's
// DiskTotal). It makes and removes a group the first time.
func Accounting() string {
	if st := Probe(); st.Available && !st.DiskTotal {
		return accounting() + "; " + NoDiskTotal
	}
	return accounting()
}

var accounting = sync.OnceValue(func() string {
	g, err := newRunGroup(Limits{TotalMemory: DefaultTotalMemory, Processes: DefaultProcesses})
	if err != nil || g == nil {
		return "rlimits" + leafNote()
	}
	g.remove()
	return "cgroup v" + strconv.Itoa(g.version)
})
