package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lcptools/lcp/sandbox"
)

func TestDoctorFlags(t *testing.T) {
	var got *DoctorOptions
	cmd := NewCmdDoctor(&Env{}, func(o *DoctorOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || !got.json || got.probe == nil {
		t.Fatalf("options = %+v", got)
	}
	cmd = NewCmdDoctor(&Env{}, func(*DoctorOptions) error { return nil })
	cmd.SetArgs([]string{"extra"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err == nil {
		t.Error("doctor accepted an argument")
	}
}

func TestDoctorReport(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   sandbox.Status
		want []string
	}{
		{"available", sandbox.Status{Available: true, Root: true, UserNamespaces: true, Overlay: true, LandlockABI: 7, Cgroups: "hybrid", Kernel: "6.18", DiskTotal: true},
			[]string{"sandbox                    available", "Landlock                   ABI 7", "copy-on-write", "user namespaces            yes",
				"disk total                 1 GiB of copy-on-write changes (the layer is a tmpfs"}},
		{"available, no disk total", sandbox.Status{Available: true, UserNamespaces: true, Overlay: true, Kernel: "6.1"},
			[]string{"sandbox                    available", "disk total                 no disk total: the copy-on-write layer stays in the temporary folder"}},
		{"unavailable", sandbox.Status{Reason: "the kernel refuses user namespaces (user.max_user_namespaces is 0)", UserNamespacesWhy: "user.max_user_namespaces is 0"},
			[]string{"unavailable: the kernel refuses user namespaces", "user namespaces            no (user.max_user_namespaces is 0)", "asks before any command or code that is not proven read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &DoctorOptions{env: &Env{Stdout: &out}, probe: func() sandbox.Status { return tc.st }}
			if err := runDoctor(o); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			out.Reset()
			o.json = true
			if err := runDoctor(o); err != nil {
				t.Fatal(err)
			}
			var back sandbox.Status
			if err := json.Unmarshal(out.Bytes(), &back); err != nil || back != tc.st {
				t.Errorf("--json = %s (%v)", out.String(), err)
			}
		})
	}
}

func TestWarnNoSandbox(t *testing.T) {
	off := func() sandbox.Status { return sandbox.Status{Reason: "testing"} }
	on := func() sandbox.Status { return sandbox.Status{Available: true} }
	for _, tc := range []struct {
		args  []string
		probe func() sandbox.Status
		warns bool
	}{
		{[]string{"call", "tool_x"}, off, true},
		{[]string{"mcp"}, off, true},
		{[]string{"list"}, off, false},
		{[]string{"call", "--help"}, off, false},
		{[]string{"call", "tool_x"}, on, false},
	} {
		var errb bytes.Buffer
		warnNoSandbox(&Env{Stderr: &errb, Args: tc.args}, tc.probe)
		if got := strings.Count(errb.String(), "\n"); (got == 1) != tc.warns || got > 1 {
			t.Errorf("%v: stderr %q, want a warning: %v", tc.args, errb.String(), tc.warns)
		}
	}
}

func TestDoctorCommand(t *testing.T) {
	t.Setenv("LCP_SANDBOX", "off")
	stdout, _, code := run(t, "", "doctor")
	if code != 0 || !strings.Contains(stdout, "unavailable: switched off by LCP_SANDBOX=off") {
		t.Errorf("lcp doctor with the sandbox off: %d %s", code, stdout)
	}
}

// TestDoctorSaysWhatRunsOutsideABox gives doctor an inventory: a Python
// library, one boxed by its host configuration, MCP servers boxed, opted
// out and remote. Nothing is started.
func TestDoctorSaysWhatRunsOutsideABox(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	for _, lib := range []string{"mine", "boxed"} {
		if err := os.MkdirAll(tools, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tools, lib+".py"), []byte("def tool_x():\n    \"\"\"X.\"\"\"\n    return 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hostCfg := filepath.Join(dir, "host.json")
	if err := os.WriteFile(hostCfg, []byte(`{"boxed": {"sandbox": "read-only", "network": ["api.example.org"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mcpCfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(mcpCfg, []byte(`{"mcpServers": {
		"fs": {"command": "lcp-never-started", "sandbox": {"workspace": "read-write", "network": ["registry.npmjs.org"]}},
		"legacy": {"command": "lcp-never-started", "sandbox": false},
		"web": {"url": "http://127.0.0.1:1/mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out}
	cmd := NewCmdDoctor(env, nil)
	cmd.SetArgs([]string{"--tools", tools, "--host-config", hostCfg, "--mcp-config", mcpCfg})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	boxedLib := "box     boxed "
	if !sandbox.Supported() {
		boxedLib = "boxed " // it does not start: doctor says so
	}
	for _, want := range []string{
		"OUTSIDE mine ", boxedLib, "network to api.example.org",
		"box     fs ", "in a box (workspace: read-write, network to registry.npmjs.org)",
		`OUTSIDE legacy `, `("sandbox": false)`,
		"remote  web ", "remote (http)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	cmd = NewCmdDoctor(env, nil)
	cmd.SetArgs([]string{"--json", "--mcp-config", mcpCfg})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Containment []struct {
			ID    string `json:"id"`
			Boxed bool   `json:"boxed"`
		} `json:"containment"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	boxed := map[string]bool{}
	for _, r := range rep.Containment {
		boxed[r.ID] = r.Boxed
	}
	if !boxed["fs"] || boxed["legacy"] || boxed["web"] {
		t.Errorf("--json containment %+v", rep.Containment)
	}

	// lcp list --libraries says it too.
	stdout, stderr, code := run(t, "", "list", "--libraries", "--tools", tools, "--host-config", hostCfg)
	if code != 0 {
		t.Fatalf("list --libraries: %d %s", code, stderr)
	}
	if !strings.Contains(stdout, "SANDBOX") || !regexp.MustCompile(`(?m)^mine .*OUTSIDE`).MatchString(stdout) {
		t.Errorf("list --libraries:\n%s", stdout)
	}
}

// doctor's engine recovers the workspace and tells what it removed.
func TestDoctorTellsRecovery(t *testing.T) {
	ws := t.TempDir()
	t.Chdir(ws)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	// A staging folder of a process that is gone: no process started at
	// the last tick a start time can name.
	stale := filepath.Join(ws, ".lcp-txn-1-18446744073709551615-ab")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := &DoctorOptions{env: &Env{Stdout: &out}, probe: func() sandbox.Status { return sandbox.Status{} }}
	if err := runDoctor(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed "+stale) {
		t.Errorf("doctor does not tell the recovery:\n%s", out.String())
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale staging folder is still there")
	}
}
