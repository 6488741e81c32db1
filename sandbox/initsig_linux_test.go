package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInitSurvivesSignals sends PID 1 every signal a tool could and checks
// that the init neither dies nor prints a crash dump, and that the run
// still ends normally.
func TestInitSurvivesSignals(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	r := runIn(t, &Policy{Workspace: ws}, `
for s in SEGV BUS ILL FPE ABRT TRAP SYS PIPE ALRM VTALRM PROF XCPU XFSZ CHLD WINCH URG IO PWR TSTP TTIN TTOU CONT 34 40 64; do
	kill -s $s 1 2>/dev/null || kill -$s 1 2>/dev/null || echo "could not send $s"
done
echo alive`)
	if r.err != nil || !strings.Contains(r.stdout, "alive") {
		t.Fatalf("the run did not end normally: %v\nstdout %q\nstderr %q", r.err, r.stdout, r.stderr)
	}
	for _, crash := range []string{"goroutine", "SIGSEGV", "panic", "runtime."} {
		if strings.Contains(r.stderr, crash) {
			t.Fatalf("crash dump reached the command's output:\n%s", r.stderr)
		}
	}
	if r.report.SetupErr != nil || r.report.Code != 0 {
		t.Fatalf("report %+v", r.report)
	}
}

// TestInitForwardsTermination: a signal the host sends the init to stop a
// run (lcp's stop ladder begins with SIGTERM) reaches the command. The
// command itself cannot signal PID 1 (EPERM: it runs with other
// credentials), so the test sends it from outside, as lcp does.
func TestInitForwardsTermination(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 1; done`)
	cmd.Dir = ws
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	box, err := Wrap(cmd, &Policy{Workspace: ws, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}})
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("first line %q", lines.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	_ = cmd.Wait()
	if rep := box.Report(); len(rest) == 0 || rest[0] != "got-term" || rep.Code != 7 {
		t.Fatalf("after SIGTERM: stdout %q, report %+v", rest, rep)
	}
}

// TestInitSurvivesHostSignals sends the init, from outside its
// namespaces (as the host's processes can), every signal it does not
// forward, then lets the command end: the init must neither die, stop nor
// print a crash dump, whether it catches the signal itself or leaves it
// to the Go runtime's own handling.
func TestInitSurvivesHostSignals(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang detector
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `echo ready; read line; echo alive`)
	cmd.Dir = ws
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	box, err := Wrap(cmd, &Policy{Workspace: ws, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}})
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("first line %q", lines.Text())
	}
	for n := 1; n < 65; n++ {
		s := syscall.Signal(n)
		switch s {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
			syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2:
			continue // these end the init, or reach the command (TestInitForwardsTermination)
		}
		if err := cmd.Process.Signal(s); err != nil {
			t.Fatalf("signal %d: %v", n, err)
		}
	}
	// Each signal is handled once none is pending any more.
	for !noSignalPending(t, cmd.Process.Pid) {
		if ctx.Err() != nil {
			t.Fatal("the init's signals stayed pending")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	werr := cmd.Wait()
	rep := box.Report()
	if werr != nil || len(rest) != 1 || rest[0] != "alive" || rep.Code != 0 || rep.SetupErr != nil {
		t.Fatalf("after the signals: wait %v, stdout %q, report %+v, stderr %q", werr, rest, rep, stderr.String())
	}
	for _, crash := range []string{"goroutine", "SIG", "panic", "runtime."} {
		if strings.Contains(stderr.String(), crash) {
			t.Fatalf("crash dump reached the command's output:\n%s", stderr.String())
		}
	}
}

// noSignalPending reports whether process pid has no signal pending, for
// the process or any of its threads, and is not stopped.
func noSignalPending(t *testing.T, pid int) bool {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // the thread is gone
		}
		for _, line := range strings.Split(string(raw), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch {
			case (k == "SigPnd" || k == "ShdPnd") && strings.Trim(v, "0") != "":
				return false
			case k == "State" && strings.HasPrefix(v, "T"):
				t.Fatalf("the init is stopped: %s", v)
			}
		}
	}
	return true
}
