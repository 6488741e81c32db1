package sandbox

import (
	"bufio"
	"context"
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
