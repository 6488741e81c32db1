package binding

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, b *Binding) string {
	t.Helper()
	infos, err := b.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, i := range infos {
		n = append(n, i.Name)
	}
	return strings.Join(n, ",")
}

const counterV1 = `_n = 0


def tool_count():
    """Counts, v1."""
    global _n
    _n += 1
    return f"v1 {_n}"
`

// TestReloadFollowsTheFiles: edits, new files, a file that stops parsing
// (its last good tools stay), removed files and a deleted folder, with
// real workers: the next call after a change runs the new code in a
// fresh worker and says so.
func TestReloadFollowsTheFiles(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	write(t, filepath.Join(tools, "counter.py"), counterV1)
	b, err := New(&Options{Folders: []string{tools}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	call := func(name string) *tool.Result {
		t.Helper()
		res, err := tool.Call(ctx, b, name, json.RawMessage(`{}`), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if r := call("tool_count"); r.Text() != "v1 1" {
		t.Fatalf("first call: %s", r.Text())
	}
	if r := call("tool_count"); r.Text() != "v1 2" || r.Payload["_reloaded"] != nil {
		t.Fatalf("second call: %+v", r)
	}

	// Nothing changed: nothing to report.
	if c, err := b.Reload(); err != nil || !c.Empty() {
		t.Fatalf("idle reload: %+v, %v", c, err)
	}

	// An edit and a new file.
	write(t, filepath.Join(tools, "counter.py"), strings.ReplaceAll(counterV1, "v1", "v2")+"\n\ndef tool_extra():\n    \"\"\"Extra.\"\"\"\n    return 'extra'\n")
	write(t, filepath.Join(tools, "lib", "lib.py"), "def tool_lib():\n    \"\"\"Lib.\"\"\"\n    return 'lib'\n")
	c, err := b.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Added, ",") != "tool_extra,tool_lib" || strings.Join(c.Changed, ",") != "tool_count" || len(c.Files) != 2 {
		t.Fatalf("change: %+v", c)
	}
	r := call("tool_count")
	if r.Text() != "v2 1" || r.Payload["_reloaded"] == nil {
		t.Fatalf("after the edit: %s %v", r.Text(), r.Payload)
	}
	if r := call("tool_count"); r.Text() != "v2 2" || r.Payload["_reloaded"] != nil {
		t.Fatalf("the note is for the first call only: %+v", r)
	}
	if r := call("tool_lib"); r.Text() != "lib" {
		t.Fatalf("new library: %+v", r)
	}

	// A file that stops parsing keeps its last good tools.
	write(t, filepath.Join(tools, "counter.py"), "def tool_count(:\n")
	c, err = b.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if c.Tools() || !c.Diagnostics || len(c.Files) != 0 {
		t.Fatalf("broken file: %+v", c)
	}
	if got := names(t, b); got != "tool_count,tool_extra,tool_lib" {
		t.Fatalf("tools of a broken file: %s", got)
	}
	found := false
	for _, d := range b.Diagnostics() {
		found = found || d.Code == "syntax-error" && strings.Contains(d.Message, "last good")
	}
	if !found {
		t.Errorf("no diagnostic for the broken file: %v", b.Diagnostics())
	}
	if r := call("tool_count"); r.Text() != "v2 3" {
		t.Fatalf("the worker keeps the last good module: %+v", r)
	}
	// Not UTF-8 (caught mid-write, say): the same.
	write(t, filepath.Join(tools, "counter.py"), "def tool_count():\n    \"\xff")
	if c, err := b.Reload(); err != nil || c.Tools() {
		t.Fatalf("not UTF-8: %+v %v", c, err)
	}

	// A removed file and a deleted folder: their tools go.
	if err := os.Remove(filepath.Join(tools, "counter.py")); err != nil {
		t.Fatal(err)
	}
	c, err = b.Reload()
	if err != nil || strings.Join(c.Removed, ",") != "tool_count,tool_extra" {
		t.Fatalf("removed file: %+v %v", c, err)
	}
	if err := os.RemoveAll(tools); err != nil {
		t.Fatal(err)
	}
	c, err = b.Reload()
	if err != nil || strings.Join(c.Removed, ",") != "tool_lib" {
		t.Fatalf("deleted folder: %+v %v", c, err)
	}
	if got := names(t, b); got != "" {
		t.Fatalf("tools of a deleted folder: %s", got)
	}
	missing := false
	for _, d := range b.Diagnostics() {
		missing = missing || d.Code == "missing-folder"
	}
	if !missing {
		t.Errorf("no diagnostic for the deleted folder: %v", b.Diagnostics())
	}
	// Made again.
	write(t, filepath.Join(tools, "counter.py"), counterV1)
	if c, err := b.Reload(); err != nil || strings.Join(c.Added, ",") != "tool_count" {
		t.Fatalf("folder made again: %+v %v", c, err)
	}
	if r := call("tool_count"); r.Text() != "v1 1" {
		t.Fatalf("after the folder came back: %+v", r)
	}
}

// TestReloadKeepsRegistrationsAndMounts: tools registered from code stay,
// mounted libraries are read again, unregistered tools stay away, and the
// prompt functions of a changed library run again.
func TestReloadKeepsRegistrationsAndMounts(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "main", "a.py"), "def tool_a():\n    \"\"\"A.\"\"\"\n\ndef tool_gone():\n    \"\"\"Gone.\"\"\"\n")
	write(t, filepath.Join(dir, "extra", "m.py"), "def tool_m():\n    \"\"\"M.\"\"\"\n\ndef tool_m_prompt():\n    return 'M one.'\n")
	b, err := New(&Options{Folders: []string{filepath.Join(dir, "main")}, Workspace: t.TempDir(), DynamicPrompts: true,
		Default: func() ([]string, error) { return []string{filepath.Join(dir, "extra")}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if _, err := b.MountToolLibrary("m"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RegisterToolFromCode(ctx, "fib", "def tool_fib(n: int):\n    '''Fib.'''\n    return n\n"); err != nil {
		t.Fatal(err)
	}
	if n := b.UnregisterToolsByPrefix("gone"); n != 1 {
		t.Fatalf("unregistered %d", n)
	}
	infos, _ := b.Tools(ctx)
	if infos[1].Description != "M one." {
		t.Fatalf("prompt: %+v", infos[1])
	}
	write(t, filepath.Join(dir, "extra", "m.py"), "def tool_m():\n    \"\"\"M.\"\"\"\n\ndef tool_m_prompt():\n    return 'M two.'\n")
	c, err := b.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, b); got != "tool_a,tool_m,tool_fib" {
		t.Fatalf("after reload: %s (%+v)", got, c)
	}
	infos, _ = b.Tools(ctx)
	if infos[1].Description != "M two." {
		t.Fatalf("the prompt function did not run again: %+v", infos[1])
	}
	paths := strings.Join(b.WatchPaths(), ",")
	// The built-in default library (extra here) is not watched.
	if strings.Contains(paths, filepath.Join(dir, "extra")) || !strings.Contains(paths, filepath.Join(dir, "main")) {
		t.Errorf("watch paths %s", paths)
	}
}

// TestReloadWhileFilesChange: reloads racing with a writer that rewrites
// a file in pieces (a reader can see any prefix of it, even an empty
// file, which no check can tell from a finished one: the watcher's quiet
// period is what waits for the end of a save) never fail and never show
// a tool the file does not define; once the writer stops, the last
// version is served.
func TestReloadWhileFilesChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "busy.py")
	version := func(i int) string {
		return "def tool_busy(n: int):\n    \"\"\"Busy, version " + string(rune('a'+i%26)) + ".\"\"\"\n    return n\n\n\ndef tool_other():\n    \"\"\"Other.\"\"\"\n"
	}
	write(t, path, version(0))
	b, err := New(&Options{Folders: []string{dir}, Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	stop := make(chan struct{})
	wrote := make(chan int)
	go func() {
		i := 0
		defer func() { wrote <- i }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			i++
			src := []byte(version(i))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				continue
			}
			for k := 0; k < len(src); k += 7 { // in pieces
				_, _ = f.Write(src[k:min(k+7, len(src))])
			}
			f.Close()
		}
	}()
	for i := 0; i < 200; i++ {
		if _, err := b.Reload(); err != nil {
			t.Fatal(err)
		}
		switch got := names(t, b); got {
		case "tool_busy,tool_other", "tool_busy", "":
		default:
			t.Fatalf("reload %d while the file changes: %q", i, got)
		}
	}
	close(stop)
	last := <-wrote
	if _, err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	infos, _ := b.Tools(context.Background())
	if want := "Busy, version " + string(rune('a'+last%26)) + "."; infos[0].Description != want {
		t.Errorf("after the writer stopped: %q, want %q", infos[0].Description, want)
	}
}
