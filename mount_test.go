package lcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/tool"
)

func writeFile(t testing.TB, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func allow(context.Context, *tool.Request) tool.Response {
	return tool.Response{Action: tool.Submit, Value: tool.Allow}
}

// TestGoBuiltinsMountBesideAFolder: with a tools folder, the Go built-in
// libraries are not in the inventory, but the mount API finds, mounts
// and runs them, beside the folder's Python tools.
func TestGoBuiltinsMountBesideAFolder(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "greet.py"), "def tool_greet(name: str):\n    \"\"\"Greets.\"\"\"\n    return 'hi ' + name\n")
	ws := t.TempDir()
	ctx := context.Background()
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Workspace: ws, Respond: allow})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if eng.IsLibraryMounted("system_shell") {
		t.Fatal("system_shell mounted before anyone asked")
	}
	if !eng.IsToolAvailable(ctx, "tool_execute_shell_command") {
		t.Fatal("tool_execute_shell_command is not available")
	}
	if lib := eng.FindLibraryForTool("tool_execute_shell_command"); lib != "system_shell" {
		t.Fatalf("FindLibraryForTool = %q", lib)
	}
	info, err := eng.LoadToolByName(ctx, "tool_execute_shell_command")
	if err != nil || info.Library.ID != "system_shell" {
		t.Fatalf("LoadToolByName: %+v, %v", info.Library, err)
	}
	if !eng.IsLibraryMounted("system_shell") {
		t.Fatal("system_shell not mounted after LoadToolByName")
	}
	if ok, err := eng.MountIfAbsent("workspace_tools"); !ok || err != nil {
		t.Fatalf("MountIfAbsent: %v %v", ok, err)
	}
	if ok, err := eng.MountToolLibrary("workspace_tools"); !ok || err != nil {
		t.Fatalf("mount again: %v %v", ok, err)
	}
	res := eng.ExecuteTool(ctx, "tool_write_file", json.RawMessage(`{"file_name":"a.txt","content":"x"}`))
	if !res.Success {
		t.Fatalf("tool_write_file: %+v", res)
	}
	res = eng.ExecuteTool(ctx, "tool_execute_shell_command", json.RawMessage(`{"command":"cat a.txt"}`))
	if !res.Success || !strings.Contains(res.Text(), "x") {
		t.Fatalf("shell: %+v", res)
	}
	res = eng.ExecuteTool(ctx, "tool_greet", json.RawMessage(`{"name":"Ada"}`))
	if !res.Success || res.Text() != "hi Ada" {
		t.Fatalf("python tool: %+v", res)
	}
	infos, _ := eng.Tools(ctx)
	if infos[0].Name != "tool_greet" {
		t.Errorf("the folder's tools come first: %s", infos[0].Name)
	}
	if eng.IsLibraryMounted("execute_python") {
		t.Error("execute_python mounted")
	}
}

// TestMountConfigAndBuiltins: Config.Mount mounts Go and Python built-in
// libraries at start, an unknown one is an error, a folder's library
// shadows a built-in of the same name, and Config.Builtins adds them all.
func TestMountConfigAndBuiltins(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "system_shell.py"), "def tool_mine():\n    \"\"\"Mine.\"\"\"\n    return 1\n")
	ctx := context.Background()
	names := func(eng *lcp.Engine) string {
		infos, _ := eng.Tools(ctx)
		var n []string
		for _, i := range infos {
			n = append(n, i.Name)
		}
		return strings.Join(n, ",")
	}
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Mount: []string{"execute_python", "user_interactive_tools", "system_shell"}})
	if err != nil {
		t.Fatal(err)
	}
	got := names(eng)
	eng.Close()
	for _, want := range []string{"tool_mine", "tool_execute_python_code", "tool_configure_service_connection"} {
		if !strings.Contains(got, want) {
			t.Errorf("tools %s lack %s", got, want)
		}
	}
	if strings.Contains(got, "tool_execute_shell_command") || strings.Contains(got, "tool_read_file") {
		t.Errorf("the folder's system_shell should shadow the built-in one: %s", got)
	}
	_, err = lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Mount: []string{"no_such_lib"}})
	if !errors.Is(err, binding.ErrLibraryNotFound) {
		t.Errorf("unknown library: %v", err)
	}
	eng, err = lcp.New(ctx, &lcp.Config{ToolFiles: []string{filepath.Join(dir, "system_shell.py")}, Builtins: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	got = names(eng)
	for _, want := range []string{"tool_mine", "tool_read_file", "tool_execute_shell_command", "tool_execute_python_file", "tool_prepare_deployment"} {
		if !strings.Contains(got, want) {
			t.Errorf("--builtins tools %s lack %s", got, want)
		}
	}
	if !strings.HasPrefix(got, "tool_mine,") {
		t.Errorf("the user's tools come first: %s", got)
	}
}

// TestPreciseAndValidatedPythonTools: precise schemas on request, and
// argument validation after coercion (a 400 listing each violation with
// its JSON pointer), globally or per library in host_tool_configs.
func TestPreciseAndValidatedPythonTools(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	src := `from typing import List, Literal, Optional


def tool_pick(n: int, mode: Literal["fast", "slow"], extra: Optional[int], tags: List[int] = [], note: Optional[str] = None):
    """Picks.

    Args:
        n: how many
        mode: the mode
    """
    return {"n": n, "mode": mode, "tags": tags, "extra": extra}
`
	writeFile(t, filepath.Join(dir, "pick.py"), src)
	ctx := context.Background()
	schemaOf := func(eng *lcp.Engine) string {
		infos, err := eng.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(infos[0].InputSchema)
	}
	plain, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if s := schemaOf(plain); strings.Contains(s, "enum") || !strings.Contains(s, `"tags": {"type": "integer"`) {
		t.Errorf("default schema is not the LCP rule's: %s", s)
	}
	// Without validation a bad mode reaches Python.
	if res := plain.ExecuteTool(ctx, "tool_pick", json.RawMessage(`{"n":"2","mode":"warp","extra":1}`)); !res.Success {
		t.Errorf("unvalidated call: %+v", res)
	}
	for name, cfg := range map[string]*lcp.Config{
		"flags":       {PreciseTypes: true, ValidateArguments: true},
		"host config": {HostToolConfigs: map[string]map[string]any{"pick": {"precise_types": true, "validate_arguments": true}}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.ToolsFolders, cfg.Workspace = []string{dir}, t.TempDir()
			eng, err := lcp.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			s := schemaOf(eng)
			for _, want := range []string{`"enum": ["fast", "slow"]`, `"items": {"type": "integer"}`, `"required": ["n", "mode"]`} {
				if !strings.Contains(s, want) {
					t.Errorf("schema lacks %s: %s", want, s)
				}
			}
			_, err = eng.Call(ctx, "tool_pick", json.RawMessage(`{"n":"x","mode":"warp","tags":[1,"a"]}`), nil)
			var inv *tool.InvalidArgumentsError
			if !errors.As(err, &inv) {
				t.Fatalf("bad call: %v", err)
			}
			ptrs := map[string]bool{}
			for _, v := range inv.Violations {
				ptrs[v.Pointer] = true
			}
			for _, p := range []string{"/n", "/mode", "/tags/1"} {
				if !ptrs[p] {
					t.Errorf("no violation at %s: %+v", p, inv.Violations)
				}
			}
			if r := tool.ErrorResult(err); r.StatusCode != 400 {
				t.Errorf("status %d", r.StatusCode)
			}
			// Coerced first ("2" is 2); Optional left out is None.
			res := eng.ExecuteTool(ctx, "tool_pick", json.RawMessage(`{"n":"2","mode":"fast"}`))
			if !res.Success || !strings.Contains(string(res.Output), `"n": 2`) && !strings.Contains(string(res.Output), `"n":2`) || !strings.Contains(strings.ReplaceAll(string(res.Output), " ", ""), `"extra":null`) {
				t.Errorf("good call: %+v %s", res, res.Output)
			}
		})
	}
}

// TestLibrariesMetadata: a folder library's sibling modules carry its
// name and icon; a file that cannot be read is a library with its
// diagnostic.
func TestLibrariesMetadata(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "db", "db.py"), "TOOL_LIBRARY_NAME = 'Database'\nTOOL_LIBRARY_ICON = 'D'\nTOOL_LIBRARY_DESC = 'DB.'\n\ndef tool_query(q: str):\n    \"\"\"Q.\"\"\"\n")
	writeFile(t, filepath.Join(dir, "db", "helpers.py"), "def tool_helper(x: int):\n    \"\"\"H.\"\"\"\n")
	writeFile(t, filepath.Join(dir, "latin.py"), "def tool_l():\n    \"\"\"Caf\xe9\"\"\"\n")
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Mount: []string{"system_shell"}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	libs, err := eng.Libraries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]lcp.LibraryInfo{}
	for _, l := range libs {
		byID[l.ID] = l
	}
	db := byID["db"]
	if db.Name != "Database" || db.Icon != "D" || db.Description != "DB." || len(db.Files) != 2 || strings.Join(db.Tools, ",") != "tool_query,tool_helper" {
		t.Errorf("db = %+v", db)
	}
	infos, _ := eng.Tools(context.Background())
	for _, in := range infos {
		if in.Name == "tool_helper" && (in.Library.Name != "Database" || in.Library.Icon != "D") {
			t.Errorf("the sibling's library: %+v", in.Library)
		}
	}
	if l := byID["latin"]; len(l.Tools) != 0 || len(l.Diagnostics) != 1 || l.Diagnostics[0].Code != "not-utf8" {
		t.Errorf("latin = %+v", l)
	}
	if l := byID["system_shell"]; l.Kind != lcp.KindBuiltin || len(l.Tools) == 0 || l.Name != "System Shell" {
		t.Errorf("system_shell = %+v", l)
	}
}
