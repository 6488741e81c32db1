package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
// minutes, past the hang detector); one that writes more than the budget
// but deletes most of it before it reaches the disk is not.
func TestBudgetWrites(t *testing.T) {
	requireIOAccounting(t)
	limits := Limits{Disk: 40 << 20, WallTime: 5 * time.Minute}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"over: one large file", `head -c 1000000000 /dev/zero > big.bin; echo written; sleep 300`, BudgetDisk},
		{"over: in a child of a child", `sh -c 'sh -c "head -c 1000000000 /dev/zero > big.bin"'; sleep 300`, BudgetDisk},
		// 56 MB written, 48 MB of it deleted before it reached the disk:
		// the count never goes past 8 MB, whenever the watch reads it.
		{"within, temporary files deleted", `for i in 1 2 3 4 5 6; do head -c 8000000 /dev/zero > tmp.bin; rm tmp.bin; done; head -c 8000000 /dev/zero > keep.bin; echo done`, ""},
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

// TestBudgetWritesUnit: with units of work (a worker's calls, begun and
// ended with BeginUnit and EndUnit), the disk budget bounds each unit:
// two units of 24 MB each stay within a 40 MiB budget (48 MB together),
// a third of 48 MB goes over, whether the watch or EndUnit sees it
// first. The script waits at a gate file between units and marks the
// end of each (hang detector: the context).
func TestBudgetWritesUnit(t *testing.T) {
	requireIOAccounting(t)
	ws := t.TempDir()
	os.Chmod(ws, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script := `while [ ! -e go1 ]; do sleep 0.05; done
		head -c 24000000 /dev/zero > a.bin; : > done1
		while [ ! -e go2 ]; do sleep 0.05; done
		head -c 24000000 /dev/zero > b.bin; : > done2
		while [ ! -e go3 ]; do sleep 0.05; done
		head -c 48000000 /dev/zero > c.bin; : > done3; sleep 300`
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Dir = ws
	box, err := Wrap(cmd, &Policy{Workspace: ws, Mode: Write, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Limits: Limits{Disk: 40 << 20, WallTime: 5 * time.Minute}})
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
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("%s never happened (exceeded %q)", what, g.exceededNow())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i, unit := range []struct{ overs bool }{{false}, {false}, {true}} {
		n := i + 1
		box.BeginUnit()
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("go%d", n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		done := filepath.Join(ws, fmt.Sprintf("done%d", n))
		waitFor(fmt.Sprintf("unit %d's end", n), func() bool { return exists(done) || g.exceededNow() != "" })
		err := box.EndUnit()
		if !unit.overs {
			if err != nil {
				t.Fatalf("unit %d of 24 MB (%d MB for the run): %v", n, 24*n, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "the disk budget (40 MiB written to the workspace)") {
			t.Fatalf("unit %d of 48 MB: err = %v", n, err)
		}
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

// BenchmarkUnitMarks: what the disk budget's per-call marks (BeginUnit
// and EndUnit, which read the I/O counters of the run's processes) add to
// a workspace-write worker's call, on a Write run of four processes (a
// worker's init, guardian, interpreter and a child, roughly), against the
// floor of any worker call: a line sent to a child process through a pipe
// and read back, measured in the same run.
func BenchmarkUnitMarks(b *testing.B) {
	requireSandbox(b)
	if !ioAccounting() {
		b.Skip("no per-process I/O accounting here")
	}
	ws := b.TempDir()
	os.Chmod(ws, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "sleep 300 & sleep 300 & wait")
	cmd.Dir = ws
	box, err := Wrap(cmd, &Policy{Workspace: ws, Mode: Write, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Limits: Limits{Disk: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for len(box.budget.runPids(cmd.Process.Pid)) < 4 {
		if ctx.Err() != nil {
			b.Fatal("the run's processes never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var marks, trip float64
	b.Run("marks", func(b *testing.B) {
		for b.Loop() {
			box.BeginUnit()
			if err := box.EndUnit(); err != nil {
				b.Fatal(err)
			}
		}
		marks = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("reference: pipe round trip", func(b *testing.B) {
		cat := exec.Command("cat")
		in, _ := cat.StdinPipe()
		out, _ := cat.StdoutPipe()
		if err := cat.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { in.Close(); _ = cat.Wait() }()
		buf := make([]byte, 6)
		for b.Loop() {
			if _, err := in.Write([]byte("hello\n")); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(out, buf); err != nil {
				b.Fatal(err)
			}
		}
		trip = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	if trip > 0 {
		load, _ := os.ReadFile("/proc/loadavg")
		b.Logf("marks %.1f µs per call, pipe round trip %.1f µs: ratio %.2f (load %s)", marks/1e3, trip/1e3, marks/trip, strings.TrimSpace(string(load)))
	}
}

// BenchmarkProcWrites: one process's I/O counters read with bare system
// calls (procWrites) against os.ReadFile of the same file, in one run.
func BenchmarkProcWrites(b *testing.B) {
	if !ioAccounting() {
		b.Skip("no per-process I/O accounting here")
	}
	pid := os.Getpid()
	var bare, readFile float64
	b.Run("procWrites", func(b *testing.B) {
		for b.Loop() {
			if _, _, ok := procWrites(pid); !ok {
				b.Fatal("no counters")
			}
		}
		bare = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("reference: os.ReadFile", func(b *testing.B) {
		p := "/proc/" + strconv.Itoa(pid) + "/io"
		for b.Loop() {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
		readFile = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	if readFile > 0 {
		load, _ := os.ReadFile("/proc/loadavg")
		b.Logf("procWrites %.1f µs, os.ReadFile %.1f µs: ratio %.2f (load %s)", bare/1e3, readFile/1e3, bare/readFile, strings.TrimSpace(string(load)))
	}
}
