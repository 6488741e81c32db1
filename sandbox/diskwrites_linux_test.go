package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func requireIOAccounting(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	if !ioAccounting() {
		t.Skip("this kernel keeps no per-process I/O accounting (/proc/PID/io)")
	}
}

// TestBudgetWrites: a Write run that writes more than its disk budget to
// the workspace is ended at "disk" (the script would otherwise sleep for
// minutes, past the hang detector); one that writes within it, and
// deletes a larger temporary file before it reaches the disk, is not.
func TestBudgetWrites(t *testing.T) {
	requireIOAccounting(t)
	limits := Limits{Disk: 40 << 20, WallTime: 5 * time.Minute}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"over: one large file", `head -c 1000000000 /dev/zero > big.bin; echo written; sleep 300`, BudgetDisk},
		{"over: in a child of a child", `sh -c 'sh -c "head -c 1000000000 /dev/zero > big.bin"'; sleep 300`, BudgetDisk},
		{"within, a temporary file deleted", `head -c 48000000 /dev/zero > tmp.bin; rm tmp.bin; head -c 8000000 /dev/zero > keep.bin; echo done`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			os.Chmod(ws, 0o755)
			r := runIn(t, &Policy{Workspace: ws, Mode: Write, Limits: limits}, tc.script)
			if r.report.Exceeded != tc.want {
				t.Fatalf("exceeded %q, want %q (stdout %q, stderr %s)", r.report.Exceeded, tc.want, r.stdout, tail(r.stderr))
			}
			if tc.want == "" {
				if r.stdout != "done\n" {
					t.Fatalf("the run did not finish: %q %s", r.stdout, tail(r.stderr))
				}
				return
			}
			if fi, err := os.Stat(filepath.Join(ws, "big.bin")); err == nil {
				t.Logf("big.bin reached %d MiB under a 40 MiB budget (%s)", fi.Size()>>20, r.report.Accounting)
			}
			if got := r.report.BudgetText(); !strings.Contains(got, "40 MiB written to the workspace") {
				t.Errorf("budget text %q", got)
			}
		})
	}
}

// TestBudgetWritesUnit: with Policy.Unit (a worker's calls), the budget
// counts each unit from the reading before the watch first saw it: two
// units of 24 MB each stay within a 40 MiB budget (48 MB together), a
// third of 48 MB goes over. The script waits at a gate file between
// units; the test moves on once the watch has read each phase (hang
// detector: the context).
func TestBudgetWritesUnit(t *testing.T) {
	requireIOAccounting(t)
	ws := t.TempDir()
	os.Chmod(ws, 0o755)
	var unit atomic.Value
	unit.Store("call-1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script := `head -c 24000000 /dev/zero > a.bin; : > done1
		while [ ! -e go2 ]; do sleep 0.05; done
		head -c 24000000 /dev/zero > b.bin; : > done2
		while [ ! -e go3 ]; do sleep 0.05; done
		head -c 48000000 /dev/zero > c.bin; echo third; sleep 300`
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Dir = ws
	box, err := Wrap(cmd, &Policy{Workspace: ws, Mode: Write, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Limits: Limits{Disk: 40 << 20, WallTime: 5 * time.Minute}, Unit: func() string { return unit.Load().(string) }})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		t.Fatal(err)
	}
	g := box.budget
	reading := func() int64 {
		g.unitMu.Lock()
		defer g.unitMu.Unlock()
		return g.last
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("%s never happened (reading %d, base %d, exceeded %q)", what, reading(), g.base.Load(), g.exceededNow())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Unit 1 writes 24 MB.
	waitFor("unit 1's writes read", func() bool { return exists(filepath.Join(ws, "done1")) && reading() >= 22<<20 })
	unit.Store("call-2")
	waitFor("unit 2 seen", func() bool { return g.base.Load() >= 22<<20 })
	if err := os.WriteFile(filepath.Join(ws, "go2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Unit 2 writes 24 MB more: 48 MB for the run, 24 for the unit.
	waitFor("unit 2's writes read", func() bool { return exists(filepath.Join(ws, "done2")) && reading() >= 44<<20 })
	if e := g.exceededNow(); e != "" {
		t.Fatalf("ended although no unit went over: %s", e)
	}
	unit.Store("call-3")
	waitFor("unit 3 seen", func() bool { return g.base.Load() >= 44<<20 })
	if err := os.WriteFile(filepath.Join(ws, "go3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if r := box.Report(); r.Exceeded != BudgetDisk {
		t.Fatalf("exceeded %q, want disk", r.Exceeded)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestDescendants: without a pids group the run's processes are found by
// their parent pids, grandchildren included.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sh -c 'sleep 300 & echo $!; wait' & wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Process.Kill(); cmd.Wait() }()
	var sleeper int
	if _, err := fmt.Fscan(out, &sleeper); err != nil {
		t.Fatal(err)
	}
	got := descendants(cmd.Process.Pid)
	if len(got) != 3 || got[0] != cmd.Process.Pid || !slices.Contains(got, sleeper) {
		t.Errorf("descendants = %v, want the shell, its child and the sleeper %d", got, sleeper)
	}
	for _, pid := range got {
		if _, _, ok := procWrites(pid); !ok {
			t.Errorf("no I/O counters for %d", pid)
		}
	}
}
