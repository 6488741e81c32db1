package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNew: lcp new writes a library that lcp check passes with no finding
// at all and that lcp call runs with a real python3; it prints the three
// commands to try it.
func TestNew(t *testing.T) {
	tools := filepath.Join(t.TempDir(), "my tools")
	out, errOut, code := run(t, "", "new", "my_notes", "--dir", tools)
	if code != 0 {
		t.Fatalf("new: exit %d: %s", code, errOut)
	}
	quoted := "'" + tools + "'"
	for _, want := range []string{
		"lcp check --tools " + quoted,
		"lcp call --tools " + quoted + " tool_my_notes_save_note file_name=notes.txt",
		"lcp mcp --tools " + quoted + " --watch",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(tools, "my_notes", "my_notes.py")); err != nil {
		t.Fatal(err)
	}

	out, _, code = run(t, "", "check", "--tools", tools, "--json", "--fail-on", "info")
	var findings []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &findings) != nil || len(findings) != 0 {
		t.Fatalf("check of the new library: exit %d\n%s", code, out)
	}

	needPython(t)
	ws := t.TempDir()
	out, errOut, code = run(t, "", "call", "--tools", tools, "--workspace", ws, "--json",
		"tool_my_notes_save_note", "file_name=notes.txt", "text=Hello from my_notes")
	if code != 0 || !strings.Contains(out, `"success": true`) {
		t.Fatalf("call: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "Hello from my_notes\n" {
		t.Fatalf("notes.txt = %q", b)
	}
	// replacing needs the operator: refused without a person, allowed with --yes
	_, _, code = run(t, "", "call", "--tools", tools, "--workspace", ws, "tool_my_notes_save_note", "file_name=notes.txt", "text=replaced")
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); code != ExitFailure || string(b) != "Hello from my_notes\n" {
		t.Fatalf("unapproved replace: exit %d, notes.txt = %q", code, b)
	}
	_, _, code = run(t, "", "call", "--tools", tools, "--workspace", ws, "--yes", "tool_my_notes_save_note", "file_name=notes.txt", "text=replaced")
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); code != 0 || string(b) != "replaced\n" {
		t.Fatalf("approved replace: exit %d, notes.txt = %q", code, b)
	}
	// no escape from the workspace, and a cancelled question is a clean failure
	out, _, code = run(t, "", "call", "--tools", tools, "--workspace", ws, "--json", "tool_my_notes_save_note", "file_name=../escape.txt", "text=x")
	if code != ExitFailure || !strings.Contains(out, "not a file inside the workspace") {
		t.Fatalf("escape: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "", "call", "--tools", tools, "--workspace", ws, "--json", "tool_my_notes_save_note", "file_name=other.txt")
	if code != ExitFailure || !strings.Contains(out, "Cancelled by user") {
		t.Fatalf("cancelled question: exit %d\n%s", code, out)
	}
}

// TestNewRefuses: an existing library is never overwritten, a bad name is
// a usage error, and neither writes anything.
func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, _, code := run(t, "", "new", "notes", "--dir", dir); code != 0 {
		t.Fatal("first new failed")
	}
	path := filepath.Join(dir, "notes", "notes.py")
	if err := os.WriteFile(path, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "", "new", "notes", "--dir", dir)
	if code != ExitFailure || !strings.Contains(errOut, "already exists") {
		t.Fatalf("second new: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != "# mine\n" {
		t.Fatal("the existing library was overwritten")
	}
	for _, args := range [][]string{{"new", "2notes"}, {"new", "my-notes"}, {"new", "import"}, {"new"}, {"new", "a", "b"}} {
		_, errOut, code := run(t, "", append(args, "--dir", filepath.Join(dir, "fresh"))...)
		if code != ExitUsage || errOut == "" {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh")); !os.IsNotExist(err) {
		t.Fatal("a refused lcp new created its folder")
	}
}
