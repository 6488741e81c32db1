package boot_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lcptools/lcp/sandbox"
	_ "github.com/lcptools/lcp/sandbox/boot"
)

// This test binary never calls sandbox.Main: importing boot is its only
// opt-in, so a sandboxed run that works shows that the re-executed binary
// entered the init from boot's initializer (without it, the copy would
// run this test suite again, and Wrap would refuse with ErrNoMain).
func TestRunWithBootOnly(t *testing.T) {
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("no sandbox here: %s", st.Reason)
	}
	ws := t.TempDir()
	cmd := exec.Command("/bin/sh", "-c", "echo hello > out.txt; cat out.txt; exit 3")
	cmd.Dir = ws
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	box, err := sandbox.Wrap(cmd, &sandbox.Policy{Workspace: ws, Mode: sandbox.Write, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	_ = cmd.Wait()
	rep := box.Report()
	if rep.SetupErr != nil || rep.Code != 3 || stdout.String() != "hello\n" {
		t.Fatalf("report %+v, stdout %q, stderr %q", rep, stdout.String(), stderr.String())
	}
	if raw, err := os.ReadFile(ws + "/out.txt"); err != nil || string(raw) != "hello\n" {
		t.Fatalf("the run's write: %q, %v", raw, err)
	}
}

// TestInitStartsBeforeHeavyPackages starts this binary as the idmap
// holder (the init's other mode, entered the same way) with the runtime's
// initialization trace on, and checks that it exits before Go initializes
// the sandbox package and net/http: a sandboxed command does not pay for
// the binary's initializers.
func TestInitStartsBeforeHeavyPackages(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{"LCP_SANDBOX_INIT=hold", "GODEBUG=inittrace=1"}
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hold: %v\n%s", err, stderr.String())
	}
	inited := map[string]bool{}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 2 && f[0] == "init" {
			inited[f[1]] = true
		}
	}
	if !inited["github.com/lcptools/lcp/sandbox/internal/sbinit"] {
		t.Fatalf("no trace of the init's package:\n%s", stderr.String())
	}
	for _, heavy := range []string{"github.com/lcptools/lcp/sandbox", "net/http", "net", "crypto/tls"} {
		if inited[heavy] {
			t.Errorf("%s initialized before the init ran", heavy)
		}
	}
}
