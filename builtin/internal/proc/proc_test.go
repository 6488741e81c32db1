//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sh(t *testing.T, script string, s Spec) *Outcome {
	t.Helper()
	s.Path = "/bin/sh"
	s.Args = []string{"-c", script}
	out, err := Run(context.Background(), s)
	if err != nil {
		t.Fatalf("Run(%q): %v", script, err)
	}
	return out
}

func TestRunSeparatesStreamsAndExitCode(t *testing.T) {
	dir := t.TempDir()
	out := sh(t, "pwd; echo oops >&2; exit 3", Spec{Dir: dir})
	if got := strings.TrimSpace(out.Stdout.Text); got != dir {
		t.Errorf("stdout = %q, want the working directory %q", got, dir)
	}
	if out.Stderr.Text != "oops\n" {
		t.Errorf("stderr = %q, want %q", out.Stderr.Text, "oops\n")
	}
	if out.ExitCode != 3 || out.TimedOut || out.Canceled {
		t.Errorf("outcome = %+v, want exit code 3", out)
	}
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	// The limit leaves a loaded machine time to start the shell and write
	// the pid file before the kill.
	out := sh(t, "sleep 30 & echo $! > "+pidFile+"; echo started; sleep 30", Spec{Dir: dir, Timeout: 2 * time.Second})
	if elapsed := time.Since(start); elapsed > 12*time.Second {
		t.Fatalf("Run took %v after a 2s time limit", elapsed)
	}
	if !out.TimedOut {
		t.Fatalf("TimedOut = false, outcome %+v", out)
	}
	if out.Stdout.Text != "started\n" {
		t.Errorf("stdout = %q, want the output written before the kill", out.Stdout.Text)
	}
	assertDead(t, pidFile)
}

func TestRunKillsBackgroundJobsAfterExit(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	out := sh(t, "sleep 30 & echo $! > "+pidFile, Spec{Dir: dir, Timeout: time.Minute})
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("Run waited %v for a background job", elapsed)
	}
	if out.ExitCode != 0 || out.TimedOut {
		t.Errorf("outcome = %+v, want a clean exit", out)
	}
	assertDead(t, pidFile)
}

func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		// A killed child of the (already reaped) shell is reparented and
		// reaped by init; until then it is a zombie, which counts as dead.
		err := syscall.Kill(pid, 0)
		if err != nil || isZombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background process %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	out, err := Run(ctx, Spec{Path: "/bin/sh", Args: []string{"-c", "sleep 30"}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Canceled || out.TimedOut || out.Signal == "" {
		t.Errorf("outcome = %+v, want cancelled by a signal", out)
	}
}

func TestRunCapsOutputKeepingHeadAndTail(t *testing.T) {
	// 100000 bytes: "A" x 50000 then "B" x 50000; keep 1000.
	// Four processes, not a loop of a thousand: the output is the point.
	out := sh(t, `head -c 50000 /dev/zero | tr '\0' A; head -c 50000 /dev/zero | tr '\0' B`, Spec{MaxOutput: 1000})
	c := out.Stdout
	if c.Total != 100000 || c.Cut != 99000 {
		t.Fatalf("Total=%d Cut=%d, want 100000 and 99000", c.Total, c.Cut)
	}
	want := strings.Repeat("A", 500) + "\n[... 99000 bytes cut ...]\n" + strings.Repeat("B", 500)
	if c.Text != want {
		t.Errorf("Text = %q..., want head, note and tail", c.Text[:80])
	}
}

func TestCapWriter(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
		cut    int64
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", 0},
		{"exactly", 4, []string{"ab", "cd"}, "abcd", 0},
		{"many small writes", 4, []string{"a", "b", "c", "d", "e", "f", "g"}, "ab\n[... 3 bytes cut ...]\nfg", 3},
		{"one big write", 4, []string{"abcdefgh"}, "ab\n[... 4 bytes cut ...]\ngh", 4},
		// é is 2 bytes: the cut never splits it.
		{"rune at the seam", 4, []string{"aé", "xxxxé"}, "a\n[... 6 bytes cut ...]\né", 6},
		{"invalid utf-8", 10, []string{"a\xffb"}, "a\uFFFDb", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newCapWriter(tt.max)
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			c := w.capture()
			if c.Text != tt.want || c.Cut != tt.cut {
				t.Errorf("capture = %q (cut %d), want %q (cut %d)", c.Text, c.Cut, tt.want, tt.cut)
			}
		})
	}
}

func TestRunNotFound(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: "lcp-no-such-program-xyz"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

func TestRunWrap(t *testing.T) {
	var saw string
	started := 0
	out, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo $WRAPPED"},
		Wrap: func(cmd *exec.Cmd) (Wrapped, error) {
			saw = cmd.Path
			cmd.Env = append(cmd.Env, "WRAPPED=yes")
			return Wrapped{Started: func() { started++ }}, nil
		}})
	if err != nil || out.Stdout.Text != "yes\n" || saw != "/bin/sh" || started != 1 {
		t.Errorf("wrap: %v %+v %q %d", err, out, saw, started)
	}
	_, err = Run(context.Background(), Spec{Path: "/bin/sh", Wrap: func(*exec.Cmd) (Wrapped, error) {
		return Wrapped{}, errors.New("refused")
	}})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a refused wrap: %v", err)
	}
}

// TestRunEndsEarly checks that a wrapper that knows the command ended lets
// Run return before the process it started exits.
func TestRunEndsEarly(t *testing.T) {
	ended := make(chan struct{})
	start := time.Now()
	out, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo out; exec >&- 2>&-; sleep 30"},
		Wrap: func(cmd *exec.Cmd) (Wrapped, error) {
			go func() { time.Sleep(300 * time.Millisecond); close(ended) }()
			return Wrapped{Ended: ended, Exit: func() (int, string, bool) { return 7, "", true }}, nil
		}})
	if err != nil || out.ExitCode != 7 || out.Stdout.Text != "out\n" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run waited %v for the process", d)
	}
}
