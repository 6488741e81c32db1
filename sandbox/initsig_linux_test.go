package sandbox

import (
	"strings"
	"testing"
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

// TestInitForwardsTermination: a signal the host sends to stop a run still
// reaches the command.
func TestInitForwardsTermination(t *testing.T) {
	requireSandbox(t)
	r := runIn(t, &Policy{Workspace: t.TempDir()}, `trap 'echo got-term; exit 7' TERM; kill -TERM 1; while :; do sleep 1; done`)
	if !strings.Contains(r.stdout, "got-term") || r.report.Code != 7 {
		t.Fatalf("stdout %q, report %+v, err %v", r.stdout, r.report, r.err)
	}
}
