package worker

import (
	"strings"
	"syscall"
	"testing"
)

func TestCrashClassification(t *testing.T) {
	exit := func(n int) *int { return &n }
	for _, tc := range []struct {
		name      string
		st        workerStatus
		ok        bool
		limit     int64
		killCause CrashCause
		fatal     string
		stderr    []string
		cause     CrashCause
		reason    string
		message   string
	}{
		{name: "os._exit", st: workerStatus{Exit: exit(3)}, ok: true, cause: CauseExit, reason: "exited with code 3"},
		{name: "segfault", st: workerStatus{Signal: 11}, ok: true, cause: CauseSignal, reason: "signal 11 (segmentation fault)",
			stderr:  []string{"Fatal Python error: Segmentation fault", "", "Current thread 0x1 (most recent call first):", "  File \"x.py\", line 3 in f"},
			message: "(stderr: Fatal Python error: Segmentation fault)"},
		{name: "sigkill from outside", st: workerStatus{Signal: 9}, ok: true, cause: CauseSignal, reason: "signal KILL from outside lcp"},
		{name: "sigkill with a limit, no oom counted", st: workerStatus{Signal: 9}, ok: true, limit: 1 << 30, cause: CauseSignal, reason: "from outside lcp"},
		{name: "abort after MemoryError", st: workerStatus{Signal: 6}, ok: true, limit: 1 << 30, stderr: []string{"MemoryError"}, cause: CauseMemoryLimit, reason: "exceeding its memory limit"},
		{name: "abort", st: workerStatus{Signal: 6}, ok: true, cause: CauseSignal, reason: "signal 6 (aborted)"},
		{name: "killed by the engine", st: workerStatus{Signal: 9}, ok: true, killCause: CauseKilled, cause: CauseKilled, reason: "did not stop"},
		{name: "internal failure", st: workerStatus{Exit: exit(70)}, ok: true, fatal: "Traceback...\nTypeError: 'NoneType' object is not callable\n", cause: CauseExit, reason: "failed internally and exited with code 70: TypeError: 'NoneType' object is not callable"},
		{name: "no report", cause: CauseSignal, reason: "without reporting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := &proc{pool: NewPool(&Options{MemoryLimit: tc.limit}), lib: Library{Path: "/l.py"}, workspace: "/ws",
				killCause: tc.killCause, fatal: tc.fatal, stderr: tc.stderr}
			if tc.killCause != 0 {
				pr.killReason = "the engine killed it because a call of tool_x timed out and did not stop within 1s"
			}
			c := pr.crashError(tc.st, tc.ok)
			if c.Cause != tc.cause || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("cause %d reason %q, want cause %d and %q", c.Cause, c.Reason, tc.cause, tc.reason)
			}
			if tc.st.Signal != 0 && (c.Signal != syscall.Signal(tc.st.Signal) || c.ExitCode != -1) {
				t.Errorf("signal %v exit %d", c.Signal, c.ExitCode)
			}
			if !strings.Contains(c.Error(), tc.message) {
				t.Errorf("Error() = %q, want it to contain %q", c.Error(), tc.message)
			}
		})
	}
}
