package worker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const stoppedLib = `import os, time


def tool_pid():
    return os.getpid()


def tool_wait(seconds: int = 3600):
    time.sleep(seconds)
    return "woke up"
`

// TestStoppedWorkerIsReplaced: a worker stopped by SIGSTOP while a call
// waits for it (no time limit) is killed after Options.StoppedLimit; the
// call gets a CrashError that says why and the next call gets a fresh
// worker.
func TestStoppedWorkerIsReplaced(t *testing.T) {
	p, _ := testPool(t, &Options{StoppedLimit: 200 * time.Millisecond})
	lib := writeLib(t, "stopped", stoppedLib)
	ws := t.TempDir()
	pid, err := strconv.Atoi(string(mustCall(t, p, ws, lib, "tool_pid", "{}").Value))
	if err != nil {
		t.Fatal(err)
	}
	// A hang detector only: the worker is killed 200 ms after it stops.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, &Request{CallID: "wait", Workspace: ws, Library: lib, Function: "tool_wait"}, nil)
		errc <- err
	}()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	var crash *CrashError
	if !errors.As(err, &crash) {
		syscall.Kill(pid, syscall.SIGCONT)
		t.Fatalf("got %v, want a CrashError", err)
	}
	if crash.Cause != CauseKilled || !strings.Contains(crash.Reason, "stopped") {
		t.Errorf("cause %v, reason %q: want the engine's kill of a stopped worker", crash.Cause, crash.Reason)
	}
	next, err := strconv.Atoi(string(mustCall(t, p, ws, lib, "tool_pid", "{}").Value))
	if err != nil {
		t.Fatal(err)
	}
	if next == pid {
		t.Errorf("the next call ran in the stopped worker %d", pid)
	}
}

// TestIsStopped: a running process and a missing one are not stopped.
func TestIsStopped(t *testing.T) {
	if isStopped(syscall.Getpid()) {
		t.Error("this process is said to be stopped")
	}
	if isStopped(1 << 30) {
		t.Error("a process that does not exist is said to be stopped")
	}
}
