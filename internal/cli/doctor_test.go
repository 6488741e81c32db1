package cli

import (
	"bytes"
	"encoding/json"
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
		{"available", sandbox.Status{Available: true, Root: true, UserNamespaces: true, Overlay: true, LandlockABI: 7, Cgroups: "hybrid", Kernel: "6.18"},
			[]string{"sandbox                    available", "Landlock                   ABI 7", "copy-on-write", "user namespaces            yes"}},
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
