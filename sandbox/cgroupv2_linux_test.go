package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeV2 makes a folder laid out like a cgroup v2 hierarchy at this
// process's own unified group (from /proc/self/cgroup), whose
// cgroup.subtree_control lists controllers, and points cgroupRoot at it
// for the test. It returns the group folder under which runs' groups go.
// A v1 memory hierarchy is absent from it, so lcp takes the v2 path.
func fakeV2(t *testing.T, controllers string) string {
	t.Helper()
	own, ok := ownCgroups()[""]
	if !ok || own == "" {
		t.Skip("this process has no cgroup v2 group (/proc/self/cgroup has no 0:: line)")
	}
	root := t.TempDir()
	dir := filepath.Join(root, own)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"cgroup.subtree_control": controllers, "cgroup.controllers": controllers} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := cgroupRoot
	cgroupRoot = root
	t.Cleanup(func() { cgroupRoot = old })
	return dir
}

// TestCgroupV2Files: where this machine's kernel gives cgroup v2 no
// controllers (they are bound to v1), the v2 path is checked against a
// folder laid out like a delegated v2 group: lcp picks v2 only when both
// memory and pids are delegated, makes one group for both, writes
// memory.max, memory.swap.max (when the kernel has swap accounting) and
// pids.max with the budget, puts the init in its cgroup.procs, and reads
// memory.events' oom_kill, pids.events' max and memory.peak as the
// budgets' counters. What the kernel then enforces is not tested here
// (docs/sandbox.md, "Limits of the sandbox").
func TestCgroupV2Files(t *testing.T) {
	for _, tc := range []struct {
		name, controllers string
		want              int // the version groupParents picks; 0: none (rlimits)
	}{
		{"memory and pids delegated", "cpu memory io pids", 2},
		{"pids not delegated", "cpu memory", 0},
		{"memory not delegated", "pids", 0},
		{"nothing delegated", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := fakeV2(t, tc.controllers)
			version, mem, pids, ok := groupParents()
			if tc.want == 0 {
				if ok {
					t.Fatalf("groupParents = v%d %s %s, want none", version, mem, pids)
				}
				g, err := newRunGroup(Limits{TotalMemory: 64 << 20, Processes: 8})
				if err != nil || g != nil {
					t.Fatalf("newRunGroup = %+v, %v; want none (the rlimits fallback)", g, err)
				}
				return
			}
			if !ok || version != 2 || mem != parent || pids != parent {
				t.Fatalf("groupParents = v%d %q %q %v, want v2 at %s", version, mem, pids, ok, parent)
			}
			for _, swap := range []bool{false, true} {
				g := &runGroup{version: 2, mem: filepath.Join(parent, "run-swap-"+strconv.FormatBool(swap))}
				g.pids = g.mem
				if err := os.Mkdir(g.mem, 0o755); err != nil {
					t.Fatal(err)
				}
				if swap {
					// The kernel makes memory.swap.max with swap accounting.
					if err := os.WriteFile(filepath.Join(g.mem, "memory.swap.max"), []byte("max\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := g.limit(Limits{TotalMemory: 64 << 20, Processes: 8}); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"memory.max": strconv.Itoa(64 << 20), "pids.max": strconv.Itoa(8 + initTasks)}
				if swap {
					want["memory.swap.max"] = "0"
				}
				for name, v := range want {
					if got, err := os.ReadFile(filepath.Join(g.mem, name)); err != nil || string(got) != v {
						t.Errorf("swap %v: %s = %q (%v), want %q", swap, name, got, err, v)
					}
				}
				if !swap {
					if _, err := os.Stat(filepath.Join(g.mem, "memory.swap.max")); err == nil {
						t.Errorf("memory.swap.max written without swap accounting")
					}
				}
			}
			// A group made the way a run's is: one folder for both.
			g, err := newRunGroup(Limits{TotalMemory: 32 << 20, Processes: 4})
			if err != nil || g == nil {
				t.Fatalf("newRunGroup: %+v, %v", g, err)
			}
			if g.version != 2 || g.mem != g.pids || filepath.Dir(g.mem) != parent || !strings.HasPrefix(filepath.Base(g.mem), cgroupPrefix) {
				t.Fatalf("group %+v under %s", g, parent)
			}
			if err := g.place(4242); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(g.mem, "cgroup.procs")); string(got) != "4242" {
				t.Errorf("cgroup.procs = %q, want the init's pid", got)
			}
			// The counters, as the kernel writes them.
			if u := g.read(); u != (usage{}) {
				t.Errorf("counters before any event: %+v", u)
			}
			for name, v := range map[string]string{
				"memory.events": "low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\noom_group_kill 0\n",
				"pids.events":   "max 3\n",
				"memory.peak":   "33554432\n",
			} {
				if err := os.WriteFile(filepath.Join(g.mem, name), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if u := g.read(); u != (usage{oomKills: 1, pidsDenied: 3, peakMemory: 32 << 20}) {
				t.Errorf("counters = %+v", u)
			}
			// The fake folder holds plain files, which a real group does
			// not: the test empties it (remove would kill the pids it lists).
			ents, _ := os.ReadDir(g.mem)
			for _, e := range ents {
				os.Remove(filepath.Join(g.mem, e.Name()))
			}
			dirs := g.dirs
			g.remove()
			for _, d := range dirs {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s not removed: %v", d, err)
				}
			}
		})
	}
}
