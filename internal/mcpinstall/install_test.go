package mcpinstall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 1, 17, 14, 4, 0, time.UTC)

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "config.json")

	// A new file, and its folder, readable by the user only.
	res, err := Install(path, "mcpServers", "lcp", json.RawMessage(entry), now)
	if err != nil || !res.Created || res.Backup != "" || res.Path != path {
		t.Fatalf("new file: %+v, %v", res, err)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", st.Mode().Perm())
	}

	// The same entry again: nothing to do.
	res, err = Install(path, "mcpServers", "lcp", json.RawMessage(entry), now)
	if err != nil || !res.Unchanged || !res.Replaced || res.Backup != "" {
		t.Fatalf("same entry: %+v, %v", res, err)
	}

	// A changed entry: backed up first, permissions kept.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	newEntry := json.RawMessage(`{"command":"/opt/lcp","args":["mcp","--watch"]}`)
	res, err = Install(path, "mcpServers", "lcp", newEntry, now)
	if err != nil || !res.Replaced || res.Backup != path+".20261201-171404.bak" {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != string(before) {
		t.Errorf("backup = %s", b)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o640 {
		t.Errorf("mode not kept: %v", st.Mode().Perm())
	}
	// A second backup in the same second gets its own name.
	res, err = Install(path, "mcpServers", "other", json.RawMessage(entry), now)
	if err != nil || res.Backup != path+".20261201-171404-2.bak" {
		t.Fatalf("second backup: %+v, %v", res, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// A file that is not JSON is refused and left exactly as it was, without
// a backup.
func TestInstallRefusesNonJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	src := "{\n  // my servers\n  \"mcpServers\": {}\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Install(path, "mcpServers", "lcp", json.RawMessage(entry), now)
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != src {
		t.Errorf("the file changed: %s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files in the folder: %v", ents)
	}
}

// A configuration kept elsewhere behind a symbolic link (dotfiles) stays
// a link: its target is written.
func TestInstallFollowsSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	res, err := Install(link, "mcpServers", "lcp", json.RawMessage(entry), now)
	if err != nil || res.Path != target {
		t.Fatalf("%+v, %v", res, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "/usr/bin/lcp") {
		t.Errorf("target = %s", b)
	}
}

func TestClientPaths(t *testing.T) {
	linux := Paths{GOOS: "linux", Home: "/home/ada", Dir: "/src/app"}
	xdg := Paths{GOOS: "linux", Home: "/home/ada", ConfigHome: "/home/ada/.cfg", Dir: "/src/app"}
	mac := Paths{GOOS: "darwin", Home: "/Users/ada", Dir: "/src/app"}
	win := Paths{GOOS: "windows", Home: `C:\Users\ada`, AppData: `C:\Users\ada\AppData\Roaming`, Dir: `C:\src\app`}
	for _, tt := range []struct {
		client string
		scope  Scope
		p      Paths
		want   string
	}{
		{"claude-desktop", User, mac, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", User, win, filepath.Join(`C:\Users\ada\AppData\Roaming`, "Claude", "claude_desktop_config.json")},
		{"claude-desktop", User, linux, "/home/ada/.config/Claude/claude_desktop_config.json"},
		{"claude-desktop", User, xdg, "/home/ada/.cfg/Claude/claude_desktop_config.json"},
		{"claude-code", User, linux, "/home/ada/.claude.json"},
		{"claude-code", Project, linux, "/src/app/.mcp.json"},
		{"cursor", User, mac, "/Users/ada/.cursor/mcp.json"},
		{"cursor", Project, linux, "/src/app/.cursor/mcp.json"},
		{"vscode", User, linux, "/home/ada/.config/Code/User/mcp.json"},
		{"vscode", User, mac, "/Users/ada/Library/Application Support/Code/User/mcp.json"},
		{"vscode", Project, linux, "/src/app/.vscode/mcp.json"},
		{"windsurf", User, linux, "/home/ada/.codeium/windsurf/mcp_config.json"},
		{"gemini", User, linux, "/home/ada/.gemini/settings.json"},
		{"gemini", Project, linux, "/src/app/.gemini/settings.json"},
	} {
		c, ok := Lookup(tt.client)
		if !ok {
			t.Fatalf("no client %s", tt.client)
		}
		got, err := c.Path(tt.scope, tt.p)
		if err != nil || got != filepath.FromSlash(tt.want) && got != tt.want {
			t.Errorf("%s %s on %s: %q, %v; want %q", tt.client, tt.scope, tt.p.GOOS, got, err, tt.want)
		}
	}
	c, _ := Lookup("claude-desktop")
	if _, err := c.Path(Project, linux); err == nil || !strings.Contains(err.Error(), "no project configuration") {
		t.Errorf("claude-desktop project: %v", err)
	}
	if _, ok := Lookup("notepad"); ok {
		t.Error("found notepad")
	}
}

// Each client gets the entry shape its documentation shows.
func TestClientEntries(t *testing.T) {
	h := map[string]string{"Authorization": "Bearer T"}
	for _, tt := range []struct{ client, stdio, http string }{
		{"claude-desktop", `{"command":"/bin/lcp","args":["mcp"]}`, ``},
		{"claude-code", `{"type":"stdio","command":"/bin/lcp","args":["mcp"]}`, `{"type":"http","url":"http://h/mcp","headers":{"Authorization":"Bearer T"}}`},
		{"cursor", `{"command":"/bin/lcp","args":["mcp"]}`, `{"url":"http://h/mcp","headers":{"Authorization":"Bearer T"}}`},
		{"vscode", `{"type":"stdio","command":"/bin/lcp","args":["mcp"]}`, `{"type":"http","url":"http://h/mcp","headers":{"Authorization":"Bearer T"}}`},
		{"windsurf", `{"command":"/bin/lcp","args":["mcp"]}`, `{"serverUrl":"http://h/mcp","headers":{"Authorization":"Bearer T"}}`},
		{"gemini", `{"command":"/bin/lcp","args":["mcp"]}`, `{"httpUrl":"http://h/mcp","headers":{"Authorization":"Bearer T"}}`},
	} {
		c, _ := Lookup(tt.client)
		if got := string(c.Stdio("/bin/lcp", []string{"mcp"})); got != tt.stdio {
			t.Errorf("%s stdio = %s, want %s", tt.client, got, tt.stdio)
		}
		if got := string(c.HTTP("http://h/mcp", h)); got != tt.http || c.Remote != (tt.http != "") {
			t.Errorf("%s http = %s (remote %v), want %s", tt.client, got, c.Remote, tt.http)
		}
	}
}
