package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// leafName is the child group UseLeafGroup moves this process into.
const leafName = "lcp"

// leaf is what UseLeafGroup did: the group under which runs' groups go
// once this process has moved into its leaf, or why it did not move.
var leaf struct {
	mu     sync.Mutex
	parent string // runs' groups go here ("" when not moved)
	status string // for lcp doctor ("" when UseLeafGroup was not called)
	why    string // why it did nothing, for Accounting ("" when it moved or was not needed)
}

// canWrite reports whether this process may write p (a group folder or
// one of its files); tests replace it, since root may write anything.
var canWrite = func(p string) bool { return unix.Access(p, unix.W_OK) == nil }

// removeGroupDir removes an empty control group; tests replace it, since
// a fake group's folder holds plain files.
var removeGroupDir = unix.Rmdir

func leafParent() string {
	leaf.mu.Lock()
	defer leaf.mu.Unlock()
	return leaf.parent
}

// leafNote is what follows "rlimits" in Accounting and Report.Accounting
// when UseLeafGroup was asked for and did nothing.
func leafNote() string {
	leaf.mu.Lock()
	defer leaf.mu.Unlock()
	if leaf.why == "" {
		return ""
	}
	return " (cgroup v2 leaf group not used: " + leaf.why + ")"
}

// LeafGroupStatus says what UseLeafGroup did, for lcp doctor: "" when it
// was not called.
func LeafGroupStatus() string {
	leaf.mu.Lock()
	defer leaf.mu.Unlock()
	return leaf.status
}

// UseLeafGroup makes cgroup v2 usable under systemd delegation (a
// delegated scope or service, a container whose group is delegated) by
// moving this process into a leaf child group "lcp" of its own group and
// then enabling the memory and pids controllers for that group's
// children: runs' groups are then made beside the leaf. The kernel allows
// a group to enable them only while it holds no process, which is why the
// move is needed. It is for programs only, called once at start before
// any Box runs: a library must not move the processes of the program that
// embeds it.
//
// It moves nothing when lcp's control groups are already usable (v1, or a
// v2 group with both controllers on), and refuses, leaving everything as
// it was, when the group is not writable, lacks either controller in its
// cgroup.controllers or holds any process but this one. A failure half
// way moves this process back. The error says why nothing was done; the
// budget then falls back as without it, and Accounting says why.
func UseLeafGroup() error {
	status, parent, err := useLeafGroup()
	leaf.mu.Lock()
	defer leaf.mu.Unlock()
	leaf.parent, leaf.status, leaf.why = parent, status, ""
	if err != nil {
		leaf.status = "not used: " + err.Error()
		leaf.why = err.Error()
	}
	return err
}

// useLeafGroup does the move; it returns the status line and the folder
// under which runs' groups go ("" when unchanged).
func useLeafGroup() (status, parent string, err error) {
	if v, _, _, ok := groupParents(); ok {
		return fmt.Sprintf("not needed: cgroup v%d is usable without moving lcp", v), "", nil
	}
	// "/" is a container's cgroup namespace root, an ordinary group, or
	// the real root group, whose cgroup.procs lists others: refused below.
	dir, ok := ownV2Dir(ownCgroups())
	if !ok {
		return "", "", errors.New("lcp is in no cgroup v2 group")
	}
	if err := leafCheck(dir); err != nil {
		return "", "", err
	}
	if err := moveToLeaf(dir); err != nil {
		return "", "", err
	}
	return "in use: lcp moved into " + filepath.Join(dir, leafName) + ", runs' groups made beside it", dir, nil
}

// leafCheck refuses a group lcp may not rearrange: not writable, without
// the memory or pids controller, or holding another process.
func leafCheck(dir string) error {
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs"), filepath.Join(dir, "cgroup.subtree_control")} {
		if !canWrite(p) {
			return fmt.Errorf("%s is not writable by lcp (is the group delegated?)", p)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read controllers: %w", err)
	}
	fields := strings.Fields(string(raw))
	for _, c := range []string{"memory", "pids"} {
		if !contains(fields, c) {
			return fmt.Errorf("the %s controller is not delegated to %s (cgroup.controllers: %q)", c, dir, strings.TrimSpace(string(raw)))
		}
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("read processes: %w", err)
	}
	self := strconv.Itoa(os.Getpid())
	var others []string
	for _, f := range strings.Fields(string(procs)) {
		if f != self {
			others = append(others, f)
		}
	}
	if len(others) > 0 {
		return fmt.Errorf("%s holds %d other process(es) (%s), which lcp does not move", dir, len(others), strings.Join(others, " "))
	}
	return nil
}

// moveToLeaf makes the leaf (or takes an empty one left over), moves this
// process into it and enables the controllers for dir's children; on a
// failure it moves the process back and removes the leaf it made.
func moveToLeaf(dir string) error {
	l := filepath.Join(dir, leafName)
	made := true
	if err := os.Mkdir(l, 0o755); errors.Is(err, os.ErrExist) {
		made = false
		if procs, err := os.ReadFile(filepath.Join(l, "cgroup.procs")); err != nil || len(strings.Fields(string(procs))) > 0 {
			return fmt.Errorf("%s is there already and is not an empty group", l)
		}
	} else if err != nil {
		return fmt.Errorf("make the leaf group: %w", err)
	}
	undo := func() {
		if made {
			_ = removeGroupDir(l)
		}
	}
	self := strconv.Itoa(os.Getpid())
	if err := writeFile(filepath.Join(l, "cgroup.procs"), self); err != nil {
		undo()
		return fmt.Errorf("move lcp into %s: %w", l, err)
	}
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+memory +pids"); err != nil {
		back := writeFile(filepath.Join(dir, "cgroup.procs"), self)
		if back != nil {
			// Still in the leaf: keep it, lcp runs there as before.
			return fmt.Errorf("enable memory and pids in %s: %w (and moving back: %v; lcp stays in %s)", dir, err, back, l)
		}
		undo()
		return fmt.Errorf("enable memory and pids in %s: %w (lcp moved back)", dir, err)
	}
	return nil
}
