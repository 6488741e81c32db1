package sandbox

import (
	"errors"
	"os/exec"
	"testing"
)

// TestWrapNeedsMain checks that a binary which did not call Main cannot
// start a sandboxed command: its re-executed copy would run its own main.
func TestWrapNeedsMain(t *testing.T) {
	if !Supported() {
		t.Skip("no sandbox here")
	}
	mainCalled.Store(false)
	defer mainCalled.Store(true)
	_, err := Wrap(exec.Command("/bin/true"), &Policy{Workspace: t.TempDir(), Mode: ReadOnly})
	if !errors.Is(err, ErrNoMain) {
		t.Fatalf("Wrap = %v, want ErrNoMain", err)
	}
}
