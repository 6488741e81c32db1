//go:build unix

package spawn

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// started starts a shell script that prints "ready" (and, with pids,
// more pids on the same line) once its traps are set, and returns the
// process, its stdin and the pids it printed.
func started(t *testing.T, script string) (*Process, io.WriteCloser, []int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	p, err := Start(cmd, &Options{DeathSignal: syscall.SIGTERM})
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); _ = p.Wait(); outR.Close() })
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("the script did not start: %q %v", line, err)
	}
	var pids []int
	for _, f := range strings.Fields(line)[1:] {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	return p, in, pids
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// gone waits (far from expected times) for pid to disappear.
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStartSetsGroupAndDeathSignal(t *testing.T) {
	p, _, _ := started(t, "echo ready; exec sleep 60")
	a := p.cmd.SysProcAttr
	if !a.Setpgid {
		t.Fatal("the child has no process group of its own")
	}
	if pgid, err := syscall.Getpgid(p.Pid()); err != nil || pgid != p.Pid() {
		t.Fatalf("process group %d (%v), want %d", pgid, err, p.Pid())
	}
	if want := expectDeathSignal(syscall.SIGTERM); deathSignalOf(a) != want {
		t.Fatalf("death signal %v, want %v", deathSignalOf(a), want)
	}
}

func TestLadder(t *testing.T) {
	tests := []struct {
		name   string
		script string
		ladder Ladder
		// want is how the child ended: "exit" (code 0), or a signal.
		want string
	}{
		{"ends when its input closes", "echo ready; cat >/dev/null; exit 0",
			Ladder{InputGrace: 30 * time.Second}, "exit"},
		{"SIGTERM when it ignores its input", "trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done",
			Ladder{InputGrace: time.Millisecond, TermGrace: 30 * time.Second}, "exit"},
		{"SIGKILL when it ignores SIGTERM", "trap '' TERM; echo ready; while :; do sleep 0.05; done",
			Ladder{TermGrace: time.Millisecond}, "killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, in, _ := started(t, tt.script)
			tt.ladder.CloseInput = func() { in.Close() }
			if !p.Stop(tt.ladder) {
				t.Fatal("Stop reports the child still running")
			}
			ws := p.State().Sys().(syscall.WaitStatus)
			got := "exit"
			if ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				got = "killed"
			} else if ws.Signaled() || ws.ExitStatus() != 0 {
				got = p.State().String()
			}
			if got != tt.want {
				t.Fatalf("the child ended %s, want %s", got, tt.want)
			}
		})
	}
}

func TestStopEndsWhatTheChildLeft(t *testing.T) {
	// The child starts a grandchild in its group and exits at once when
	// its input closes; the grandchild must not outlive the stop.
	p, in, pids := started(t, "sleep 300 & echo ready $!; cat >/dev/null")
	if len(pids) != 1 || !alive(pids[0]) {
		t.Fatalf("no grandchild: %v", pids)
	}
	p.Stop(Ladder{CloseInput: func() { in.Close() }, InputGrace: 30 * time.Second})
	gone(t, pids[0])
}

func TestKillEndsAdoptedGroups(t *testing.T) {
	// A grandchild in a group of its own, as a worker below its guardian.
	p, _, pids := started(t, "setsid sleep 300 & sleep 0.01; echo ready $!; exec sleep 300")
	if len(pids) != 1 {
		t.Fatalf("no grandchild: %v", pids)
	}
	p.Adopt(pids[0])
	p.Kill()
	if err := p.Wait(); err == nil {
		t.Fatal("the killed child reports success")
	}
	gone(t, pids[0])
}

// TestChildDiesWithLcp re-runs the test binary as "lcp", which starts a
// child through Start; lcp is then killed with SIGKILL, and the child must
// not outlive it.
func TestChildDiesWithLcp(t *testing.T) {
	if pidFile := os.Getenv("LCP_SPAWN_PARENT"); pidFile != "" {
		cmd := exec.Command("/bin/sh", "-c", "echo $$ > "+pidFile+".tmp && mv "+pidFile+".tmp "+pidFile+"; exec sleep 300")
		p, err := Start(cmd, nil)
		if err != nil {
			os.Exit(2)
		}
		_ = p.Wait()
		os.Exit(0)
	}
	if expectDeathSignal(syscall.SIGKILL) == 0 {
		t.Skip("no parent-death signal on this system")
	}
	pidFile := t.TempDir() + "/pid"
	parent := exec.Command(os.Args[0], "-test.run=^TestChildDiesWithLcp$")
	parent.Env = append(os.Environ(), "LCP_SPAWN_PARENT="+pidFile)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(30 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	if child == 0 {
		t.Fatal("the child never started")
	}
	gone(t, child)
}
