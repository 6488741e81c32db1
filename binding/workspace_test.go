package binding

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/tool"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestWorkspaceGone: a call whose workspace was removed, or replaced by a
// file, fails with the workspace named, once workspaceRecheck has passed
// since the workspace was last found to be a directory (before, it is not
// looked at); a workspace made again serves calls again.
func TestWorkspaceGone(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"w.py": "def tool_w() -> str:\n    \"\"\"Returns w.\"\"\"\n    return 'w'\n"})
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(&Options{Folders: []string{dir}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	b.now = clock.now
	call := func() (*tool.Result, error) {
		return tool.Call(context.Background(), b, "tool_w", json.RawMessage(`{}`), nil)
	}
	wantOK := func(when string) {
		t.Helper()
		res, err := call()
		if err != nil || !res.Success || res.Text() != "w" {
			t.Fatalf("%s: %+v, %v", when, res, err)
		}
	}
	wantGone := func(when, words string) {
		t.Helper()
		res, err := call()
		var ia *tool.InvalidArgumentsError
		switch {
		case errors.As(err, &ia):
			if !strings.Contains(ia.Message, "workspace "+ws) || !strings.Contains(ia.Message, words) {
				t.Errorf("%s: %q, want the workspace and %q", when, ia.Message, words)
			}
		case err != nil:
			t.Errorf("%s: %v, want an InvalidArgumentsError", when, err)
		default:
			t.Errorf("%s: %+v, want an InvalidArgumentsError", when, res)
		}
	}
	wantOK("first call")
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	clock.add(workspaceRecheck)
	wantGone("removed", "no such file")
	wantGone("removed, again at once", "no such file") // a failed check is not remembered
	if err := os.WriteFile(ws, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantGone("a file", "not a directory")
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	wantOK("made again")
	// Within workspaceRecheck of a check the workspace is not looked at:
	// a call made then runs as one made just before the removal.
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	clock.add(workspaceRecheck - time.Millisecond)
	wantOK("removed, within the recheck")
	clock.add(time.Millisecond)
	wantGone("removed, after the recheck", "no such file")
}
