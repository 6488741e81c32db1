package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVenvWorksAfterApply makes a virtual environment in a copy-on-write
// run, applies what needs no approval, and runs the environment's Python
// on the host afterwards.
func TestVenvWorksAfterApply(t *testing.T) {
	requireSandbox(t)
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	if exec.Command(py, "-c", "import venv, ensurepip").Run() != nil {
		t.Skip("python3 has no venv/ensurepip")
	}
	ws := t.TempDir()
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, py+" -m venv --without-pip .venv2 && echo made")
	if !strings.Contains(r.stdout, "made") {
		t.Fatalf("venv: %s %s", r.stdout, r.stderr)
	}
	cs, err := r.box.Changes(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Risky() {
		t.Errorf("asks for %s: %s", c.Path, c.Why)
	}
	out := cs.Apply(func(c *Change) bool { return !c.Risky }, nil)
	if len(out.Failed) > 0 || len(out.Conflicts) > 0 {
		t.Fatalf("apply: failed %v, conflicts %v", out.Failed, out.Conflicts)
	}
	b, err := exec.Command(filepath.Join(ws, ".venv2", "bin", "python3"), "-c", "import sys; print(sys.prefix)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(b)) != filepath.Join(ws, ".venv2") {
		t.Fatalf("the venv's python after apply: %q, %v", b, err)
	}
}

func TestShownProgram(t *testing.T) {
	cs := &ChangeSet{Workspace: t.TempDir(), shown: []string{"/usr", "/etc", "/"}}
	tests := []struct {
		target string
		want   bool
	}{
		{"/usr/bin/python3", true},
		{"/bin/sh", false}, // /bin is not in shown here
		{"/etc/passwd", false},
		{"/usr/bin", false},
		{"/root/.ssh/id_rsa", false},
		{"relative/python3", false},
	}
	for _, tc := range tests {
		if _, err := os.Stat(tc.target); tc.want && err != nil {
			t.Skipf("needs %s", tc.target)
		}
		if got := cs.shownProgram(tc.target); got != tc.want {
			t.Errorf("shownProgram(%q) = %v, want %v", tc.target, got, tc.want)
		}
	}
}
