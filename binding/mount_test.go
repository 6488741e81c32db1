package binding

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func toolNames(t *testing.T, b *Binding) []string {
	t.Helper()
	infos, err := b.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, i := range infos {
		n = append(n, i.Name)
	}
	return n
}

func mountFixture(t *testing.T) (lib, other string) {
	lib = t.TempDir()
	writeFiles(t, lib, map[string]string{
		"db/db.py":           "def tool_query(sql: str):\n    return 'rows for ' + sql\n\ndef tool_schema():\n    return 'schema'\n",
		"db/helpers.py":      "def tool_helper():\n    return 'help'\n",
		"net.py":             "def tool_ping(host: str = 'localhost'):\n    return 'pong ' + host\n",
		"weather/weather.py": "def tool_weather(city: str):\n    return 'sunny in ' + city\n",
	})
	other = t.TempDir()
	writeFiles(t, other, map[string]string{"x.py": "def tool_x():\n    return 'x'\n"})
	return lib, other
}

func TestMounting(t *testing.T) {
	needPython(t)
	lib, other := mountFixture(t)
	b, err := New(&Options{Files: []string{filepath.Join(other, "x.py")}, Default: func() ([]string, error) { return []string{lib}, nil }, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := toolNames(t, b); len(got) != 1 || got[0] != "tool_x" {
		t.Fatalf("initial tools %v", got)
	}
	if b.IsLibraryMounted("db") {
		t.Fatal("db mounted before MountToolLibrary")
	}
	ok, err := b.MountToolLibrary("db")
	if err != nil || !ok {
		t.Fatalf("mount db: %v %v", ok, err)
	}
	want := "tool_x tool_query tool_schema tool_helper"
	if got := strings.Join(toolNames(t, b), " "); got != want {
		t.Fatalf("after mount: %s, want %s", got, want)
	}
	// Idempotent: nothing registered twice, no clash reported.
	ok, err = b.MountToolLibrary("db")
	if err != nil || !ok || strings.Join(toolNames(t, b), " ") != want {
		t.Fatalf("second mount: %v %v %v", ok, err, toolNames(t, b))
	}
	for _, d := range b.Diagnostics() {
		if d.Code == "duplicate-tool" {
			t.Fatalf("idempotent mount reported a clash: %v", d)
		}
	}
	if ok, err := b.MountToolLibraryIfAbsent("net"); err != nil || !ok || !b.IsLibraryMounted("net") {
		t.Fatalf("mount net: %v %v", ok, err)
	}
	if _, err := b.MountToolLibrary("nope"); !errors.Is(err, ErrLibraryNotFound) {
		t.Fatalf("unknown library: %v", err)
	}
	if _, err := b.MountToolLibrary("../etc"); !errors.Is(err, ErrLibraryNotFound) {
		t.Fatalf("path in a library name: %v", err)
	}
	res, err := tool.Call(context.Background(), b, "tool_query", json.RawMessage(`{"sql":"select 1"}`), nil)
	if err != nil || res.Text() != "rows for select 1" {
		t.Fatalf("call of a mounted tool: %v %v", res, err)
	}

	// Unregistering one tool of a library makes it not fully mounted.
	if n := b.UnregisterToolsByPrefix("helper"); n != 1 {
		t.Fatalf("unregister removed %d", n)
	}
	if b.IsLibraryMounted("db") {
		t.Fatal("db still fully mounted after tool_helper was removed")
	}
	if ok, _ := b.MountToolLibrary("db"); !ok {
		t.Fatal("remount")
	}
}

func TestFindAndLoadTool(t *testing.T) {
	needPython(t)
	lib, other := mountFixture(t)
	b, err := New(&Options{Files: []string{filepath.Join(other, "x.py")}, Default: func() ([]string, error) { return []string{lib}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for tl, want := range map[string]string{"tool_weather": "weather", "tool_helper": "db", "tool_ping": "net", "tool_query": "db", "tool_none": ""} {
		if got := b.FindLibraryForTool(tl); got != want {
			t.Errorf("FindLibraryForTool(%s) = %q, want %q", tl, got, want)
		}
	}
	if !b.IsToolAvailable("tool_ping") || !b.IsToolAvailable("tool_x") || b.IsToolAvailable("tool_none") {
		t.Fatal("IsToolAvailable")
	}
	info, err := b.LoadToolByName("tool_ping")
	if err != nil || info.Name != "tool_ping" || info.Library.ID != "net" {
		t.Fatalf("LoadToolByName: %+v %v", info, err)
	}
	if !b.IsLibraryMounted("net") {
		t.Fatal("LoadToolByName did not mount net")
	}
	var unknown *tool.UnknownToolError
	if _, err := b.LoadToolByName("tool_none"); !errors.As(err, &unknown) {
		t.Fatalf("LoadToolByName(unknown): %v", err)
	}
}

func TestRegisterToolFromCode(t *testing.T) {
	needPython(t)
	b, err := New(&Options{Files: []string{}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	fib := "def tool_fibonacci(n: int) -> dict:\n    '''Computes the n-th Fibonacci number.'''\n    a, b = 0, 1\n    for _ in range(int(n)): a, b = b, a + b\n    return {'success': True, 'output': str(a)}\n"
	names, err := b.RegisterToolFromCode(ctx, "fibonacci", fib)
	if err != nil || len(names) != 1 || names[0] != "tool_fibonacci" {
		t.Fatalf("register: %v %v", names, err)
	}
	res, err := tool.Call(ctx, b, "tool_fibonacci", json.RawMessage(`{"n":"10"}`), nil)
	if err != nil || res.Text() != "55" {
		t.Fatalf("call: %v %v", res, err)
	}

	var ce *CodeError
	_, err = b.RegisterToolFromCode(ctx, "broken", "def tool_b(:\n    pass\n")
	if !errors.As(err, &ce) || ce.Line != 1 {
		t.Fatalf("syntax error: %v", err)
	}
	_, err = b.RegisterToolFromCode(ctx, "raises", "raise RuntimeError('at import')\ndef tool_r():\n    return 1\n")
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "RuntimeError: at import") || ce.Traceback == "" {
		t.Fatalf("import error: %v", err)
	}
	if _, err := b.Handler(ctx, "tool_r"); err == nil {
		t.Fatal("a rejected registration registered its tool")
	}

	// Replacement: the same name from new code.
	fib2 := "def tool_fibonacci(n: int):\n    return 'replaced'\n"
	if _, err := b.RegisterToolFromCode(ctx, "fibonacci", fib2); err != nil {
		t.Fatal(err)
	}
	res, err = tool.Call(ctx, b, "tool_fibonacci", json.RawMessage(`{"n":1}`), nil)
	if err != nil || res.Text() != "replaced" {
		t.Fatalf("replaced tool: %v %v", res, err)
	}
	if got := toolNames(t, b); len(got) != 1 {
		t.Fatalf("tools after replacement: %v", got)
	}

	// Dynamic tools survive a worker crash: the code runs again in the
	// fresh worker.
	crash := "import os\nSTATE = []\ndef tool_crash():\n    os._exit(3)\ndef tool_state():\n    STATE.append(1)\n    return len(STATE)\n"
	if _, err := b.RegisterToolFromCode(ctx, "crashy", crash); err != nil {
		t.Fatal(err)
	}
	if res, err := tool.Call(ctx, b, "tool_state", nil, nil); err != nil || res.Text() != "1" {
		t.Fatalf("state: %v %v", res, err)
	}
	_, err = tool.Call(ctx, b, "tool_crash", nil, nil)
	var te *tool.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("crash: %v", err)
	}
	res, err = tool.Call(ctx, b, "tool_state", nil, nil)
	if err != nil || res.Text() != "1" || res.Payload["_state_reset"] == nil {
		t.Fatalf("after the crash: %+v %v", res, err)
	}

	if n := b.UnregisterToolsByPrefix("fibonacci"); n != 1 {
		t.Fatalf("unregister: %d", n)
	}
	var unknown *tool.UnknownToolError
	if _, err := tool.Call(ctx, b, "tool_fibonacci", nil, nil); !errors.As(err, &unknown) {
		t.Fatalf("after unregister: %v", err)
	}
}
