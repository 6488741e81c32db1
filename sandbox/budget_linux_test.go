package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// requireGroups skips the test where the kernel's accounting cannot be
// used by this process (no writable memory and pids hierarchy).
func requireGroups(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	g, err := newRunGroup(Limits{TotalMemory: 64 << 20, Processes: 8})
	if err != nil {
		t.Fatalf("control groups: %v", err)
	}
	if g == nil {
		t.Skip("no writable memory and pids control groups here: the budget falls back to rlimits")
	}
	g.remove()
}

// TestBudget floods each budget with real processes: the run ends (each
// script would otherwise sleep for minutes, past the hang detector), its
// report names the budget, and a copy-on-write run's files stay out of
// the host's temporary folder.
func TestBudget(t *testing.T) {
	requireGroups(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is needed for the memfd flood")
	}
	// The floods must end by their budget, never by the time budget: it
	// is minutes away.
	limits := Limits{TotalMemory: 256 << 20, Disk: 64 << 20, Processes: 64, WallTime: 5 * time.Minute,
		Memory: 1 << 30, TmpSize: 1 << 30}
	memfd := `import os
fd = os.memfd_create("x")
chunk = b"x" * (1 << 20)
while True:
    os.write(fd, chunk)
`
	for _, tc := range []struct {
		name, script, want string
		cow                bool
	}{
		{"memory: processes, tmpfs and memfd", `
			python3 -c 'b = bytearray(100 << 20); b[::4096] = b"x" * len(b[::4096]); import time; time.sleep(300)' &
			python3 -c 'b = bytearray(100 << 20); b[::4096] = b"x" * len(b[::4096]); import time; time.sleep(300)' &
			head -c 100000000 /dev/zero > /tmp/fill
			head -c 100000000 /dev/zero > /dev/shm/fill
			python3 -c '` + memfd + `'
			wait`, BudgetMemory, false},
		{"disk: the copy-on-write layer", `head -c 200000000 /dev/zero > big.bin; echo written; sleep 300`, BudgetDisk, true},
		{"disk: many small files", `i=0; while [ $i -lt 100000 ]; do : > f$i; i=$((i+1)); done; sleep 300`, BudgetDisk, true},
		{"processes: a fork loop", `while true; do sleep 300 & done`, BudgetProcesses, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			os.Chmod(ws, 0o755)
			mode := Write
			if tc.cow {
				mode = CopyOnWrite
			}
			r := runIn(t, &Policy{Workspace: ws, Mode: mode, Limits: limits}, tc.script)
			if r.report.Exceeded != tc.want {
				t.Fatalf("exceeded %q, want %q (accounting %s; stderr %s)", r.report.Exceeded, tc.want, r.report.Accounting, tail(r.stderr))
			}
			if !strings.Contains(r.report.BudgetText(), tc.want) {
				t.Errorf("budget text %q", r.report.BudgetText())
			}
			if tc.cow {
				// The layer is a tmpfs of its own: the host's temporary
				// folder holds the run's folder, nearly empty.
				if strings.HasPrefix(r.box.Upper(), os.TempDir()) {
					t.Errorf("the layer %s is in the temporary folder", r.box.Upper())
				}
				if n := diskUse(r.box.tmp); n > 1<<20 {
					t.Errorf("the run's folder in the temporary folder holds %d bytes", n)
				}
				if _, err := os.Stat(filepath.Join(ws, "big.bin")); err == nil {
					t.Error("a file of the run reached the workspace")
				}
			}
		})
	}
}

// TestBudgetWithin: a run inside its budget reports none, says how it was
// accounted and what memory it had, and leaves no control group.
func TestBudgetWithin(t *testing.T) {
	requireGroups(t)
	ws := t.TempDir()
	os.Chmod(ws, 0o755)
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "echo hi > new.txt; head -c 1000000 /dev/zero > /tmp/x")
	if r.err != nil || r.report.Exceeded != "" || !r.report.Exited {
		t.Fatalf("err %v, report %+v, stderr %s", r.err, r.report, r.stderr)
	}
	if !strings.HasPrefix(r.report.Accounting, "cgroup") || r.report.PeakMemory < 1<<20 {
		t.Errorf("accounting %q, peak memory %d", r.report.Accounting, r.report.PeakMemory)
	}
	cs, err := r.box.Changes(nil)
	if err != nil || len(cs.Changes) != 1 || cs.Changes[0].Path != "new.txt" {
		t.Fatalf("changes %v, %v", cs, err)
	}
	r.box.Close()
	if left := ownGroups(t); len(left) > 0 {
		// Removal may finish in the background a moment after Close.
		deadline := time.Now().Add(2 * time.Minute)
		for len(left) > 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			left = ownGroups(t)
		}
		if len(left) > 0 {
			t.Errorf("control groups left: %v", left)
		}
	}
}

// TestBudgetTime: the wall time ends a run and is named.
func TestBudgetTime(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	r := runIn(t, &Policy{Workspace: ws, Limits: Limits{WallTime: 200 * time.Millisecond}}, "sleep 300")
	if r.report.Exceeded != BudgetTime {
		t.Fatalf("exceeded %q", r.report.Exceeded)
	}
}

// TestSweepGroups: recovery removes the groups of a dead lcp, never a
// live one's.
func TestSweepGroups(t *testing.T) {
	requireGroups(t)
	_, memParent, _, _ := groupParents()
	dead := filepath.Join(memParent, cgroupPrefix+"999999999-1-00000000")
	if err := os.Mkdir(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := newRunGroup(Limits{TotalMemory: 64 << 20, Processes: 8})
	if err != nil || g == nil {
		t.Fatalf("group %v: %v", g, err)
	}
	defer g.remove()
	var errs []error
	removed := sweepGroups(&errs)
	if len(errs) > 0 || !contains(removed, dead) {
		t.Errorf("removed %v, errors %v", removed, errs)
	}
	if !isDir(g.mem) {
		t.Error("a live group was removed")
	}
}

func ownGroups(t *testing.T) []string {
	_, memParent, pidsParent, _ := groupParents()
	var out []string
	for _, parent := range uniq(memParent, pidsParent) {
		names, _ := readNames(parent)
		for _, n := range names {
			if strings.HasPrefix(n, cgroupPrefix+strconv.Itoa(os.Getpid())+"-") {
				out = append(out, filepath.Join(parent, n))
			}
		}
	}
	return out
}

// diskUse sums the sizes of the files under dir.
func diskUse(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

// BenchmarkRunGroup is the cost of a run's control groups: made, limited,
// removed.
func BenchmarkRunGroup(b *testing.B) {
	if _, _, _, ok := groupParents(); !ok {
		b.Skip("no control groups")
	}
	for b.Loop() {
		g, err := newRunGroup(Limits{TotalMemory: 64 << 20, Processes: 8})
		if err != nil || g == nil {
			b.Fatal(g, err)
		}
		if rmdirs(g.dirs) != nil {
			b.Fatal("rmdir")
		}
	}
}

// BenchmarkPlace is the cost of putting a started process in a run's
// groups (writing cgroup.procs of each hierarchy).
func BenchmarkPlace(b *testing.B) {
	if _, _, _, ok := groupParents(); !ok {
		b.Skip("no control groups")
	}
	for b.Loop() {
		b.StopTimer()
		g, err := newRunGroup(Limits{TotalMemory: 64 << 20, Processes: 8})
		if err != nil || g == nil {
			b.Fatal(g, err)
		}
		cmd := exec.Command("/bin/sleep", "60")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := g.place(cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cmd.Process.Kill()
		cmd.Wait()
		rmdirs(g.dirs)
		b.StartTimer()
	}
}
