//go:build unix

package worker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An interpreter that does not answer within the start budget is named
// as such, not as a crash ("signal: killed").
func TestInterpreterOverItsStartBudget(t *testing.T) {
	py := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewPool(&Options{Python: py, StartTimeout: 100 * time.Millisecond})
	defer p.Close()
	lib := writeLib(t, "budget", "def tool_x():\n    return 1\n")
	_, err := p.Call(context.Background(), &Request{Workspace: t.TempDir(), Library: lib, Function: "tool_x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") || strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("err = %v, want the start budget named", err)
	}
}
