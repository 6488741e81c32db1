//go:build linux

package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildDiesWithTheEngine re-runs the test binary as an "engine" that
// starts a long command through Run, kills the engine with SIGKILL, and
// checks that the command did not outlive it.
func TestChildDiesWithTheEngine(t *testing.T) {
	if os.Getenv("LCP_PROC_ENGINE") != "" {
		pidFile := os.Getenv("LCP_PROC_ENGINE")
		_, _ = Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo $$ > " + pidFile + "; exec sleep 300"}, Dir: os.TempDir()})
		return
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	engine := exec.Command(os.Args[0], "-test.run=^TestChildDiesWithTheEngine$")
	engine.Env = append(os.Environ(), "LCP_PROC_ENGINE="+pidFile)
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if child == 0 {
		_ = engine.Process.Kill()
		t.Fatal("the command never started")
	}
	_ = engine.Process.Kill()
	_ = engine.Wait()
	for time.Now().Before(deadline) {
		if syscall.Kill(child, 0) != nil {
			return // gone
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(child, syscall.SIGKILL)
	t.Fatalf("command %d outlived the engine", child)
}
