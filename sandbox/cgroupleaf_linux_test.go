package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeDelegated lays out a folder like a delegated cgroup v2 group at
// this process's own 0:: path (fakeV2) whose cgroup.controllers lists
// controllers, whose cgroup.subtree_control enables none and whose
// cgroup.procs lists procs. It resets what UseLeafGroup keeps after the
// test and returns the group's folder.
func fakeDelegated(t *testing.T, controllers, procs string) string {
	t.Helper()
	dir := fakeV2(t, "")
	for name, v := range map[string]string{"cgroup.controllers": controllers, "cgroup.procs": procs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldWrite, oldRemove := canWrite, removeGroupDir
	// A real group's files go with its folder; the fake's are plain files.
	removeGroupDir = os.RemoveAll
	t.Cleanup(func() {
		canWrite, removeGroupDir = oldWrite, oldRemove
		leaf.mu.Lock()
		leaf.parent, leaf.status, leaf.why = "", "", ""
		leaf.mu.Unlock()
	})
	return dir
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLeafGroupMove: in a group that holds only this process and has
// memory and pids delegated, UseLeafGroup makes the leaf lcp/, writes
// this process's pid into its cgroup.procs, enables +memory +pids in the
// group's cgroup.subtree_control, and runs' groups are then made in the
// group, beside the leaf. The kernel's side (that the move and the
// controllers take effect) cannot be tested on a machine whose memory and
// pids controllers are bound to v1 (docs/sandbox.md, "cgroup v2.").
func TestLeafGroupMove(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	dir := fakeDelegated(t, "cpu io memory pids", self+"\n")
	if err := UseLeafGroup(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dir, leafName, "cgroup.procs")); got != self {
		t.Errorf("leaf cgroup.procs = %q, want %s", got, self)
	}
	if got := readString(t, filepath.Join(dir, "cgroup.subtree_control")); got != "+memory +pids" {
		t.Errorf("cgroup.subtree_control = %q, want +memory +pids", got)
	}
	if st := LeafGroupStatus(); !strings.HasPrefix(st, "in use") || leafNote() != "" {
		t.Errorf("status %q, note %q", st, leafNote())
	}
	version, mem, pids, ok := groupParents()
	if !ok || version != 2 || mem != dir || pids != dir {
		t.Fatalf("groupParents = v%d %q %q %v, want v2 at %s", version, mem, pids, ok, dir)
	}
	g, err := newRunGroup(Limits{TotalMemory: 32 << 20, Processes: 4})
	if err != nil || g == nil {
		t.Fatalf("newRunGroup: %+v, %v", g, err)
	}
	if filepath.Dir(g.mem) != dir || !strings.HasPrefix(filepath.Base(g.mem), cgroupPrefix) {
		t.Errorf("run group %s, want a sibling of %s", g.mem, filepath.Join(dir, leafName))
	}
	if err := os.RemoveAll(g.mem); err != nil {
		t.Fatal(err)
	}
}

// TestLeafGroupRefusals: a group lcp may not rearrange is left as it
// was, the fallback stays, and the reason is in the status and in
// Accounting's note; a failure after the move moves this process back.
func TestLeafGroupRefusals(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		name, controllers, procs string
		setup                    func(t *testing.T, dir string)
		want                     string // in the error
	}{
		{name: "holds another process", controllers: "memory pids", procs: self + "\n4242\n", want: "1 other process(es) (4242)"},
		{name: "holds only others", controllers: "memory pids", procs: "4242\n4243\n", want: "2 other process(es)"},
		{name: "memory missing", controllers: "cpu pids", procs: self, want: "memory controller is not delegated"},
		{name: "pids missing", controllers: "memory", procs: self, want: "pids controller is not delegated"},
		{name: "group not writable", controllers: "memory pids", procs: self, want: "not writable",
			setup: func(t *testing.T, dir string) { canWrite = func(p string) bool { return p != dir } }},
		{name: "subtree_control not writable", controllers: "memory pids", procs: self, want: "cgroup.subtree_control is not writable",
			setup: func(t *testing.T, dir string) {
				canWrite = func(p string) bool { return filepath.Base(p) != "cgroup.subtree_control" }
			}},
		{name: "leaf there with a process", controllers: "memory pids", procs: self, want: "not an empty group",
			setup: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, leafName), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, leafName, "cgroup.procs"), []byte("4242\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "kernel refuses the controllers", controllers: "memory pids", procs: self, want: "lcp moved back",
			setup: func(t *testing.T, dir string) {
				// Writing a folder fails, as the kernel's EBUSY would.
				sc := filepath.Join(dir, "cgroup.subtree_control")
				if err := os.Remove(sc); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(sc, 0o755); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeDelegated(t, tc.controllers, tc.procs)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			_, leafBefore := os.Stat(filepath.Join(dir, leafName))
			err := UseLeafGroup()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("UseLeafGroup = %v, want an error with %q", err, tc.want)
			}
			if st := LeafGroupStatus(); st != "not used: "+err.Error() {
				t.Errorf("status %q", st)
			}
			if n := leafNote(); !strings.Contains(n, tc.want) {
				t.Errorf("Accounting's note %q lacks the reason", n)
			}
			if _, err := os.Stat(filepath.Join(dir, leafName)); (err == nil) != (leafBefore == nil) {
				t.Errorf("leaf group made or removed: %v", err)
			}
			if got := readString(t, filepath.Join(dir, "cgroup.procs")); strings.TrimSpace(got) != strings.TrimSpace(tc.procs) {
				t.Errorf("cgroup.procs = %q, want %q as it was (moved back)", got, tc.procs)
			}
			if fi, err := os.Stat(filepath.Join(dir, "cgroup.subtree_control")); err == nil && !fi.IsDir() {
				if got := readString(t, filepath.Join(dir, "cgroup.subtree_control")); got != "" {
					t.Errorf("cgroup.subtree_control = %q, want it untouched", got)
				}
			}
			if v, _, _, ok := groupParents(); ok {
				t.Errorf("groupParents = v%d after a refusal, want the fallback", v)
			}
			if g, err := newRunGroup(Limits{TotalMemory: 32 << 20, Processes: 4}); g != nil || err != nil {
				t.Errorf("newRunGroup = %+v, %v; want none (the rlimits fallback)", g, err)
			}
		})
	}
}
