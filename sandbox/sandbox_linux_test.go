package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHomeHiddenAndSystemReadOnly(t *testing.T) {
	requireSandbox(t)
	tmp := t.TempDir()
	ws, home, outside := filepath.Join(tmp, "ws"), filepath.Join(tmp, "home"), filepath.Join(tmp, "outside")
	write(t, filepath.Join(home, ".ssh", "id_rsa"), "FAKE-KEY")
	write(t, filepath.Join(outside, "canary"), "canary")
	write(t, filepath.Join(ws, "a.txt"), "a")
	r := runIn(t, &Policy{Workspace: ws, Mode: Write, Home: home}, fmt.Sprintf(`
cat %[1]s/.ssh/id_rsa 2>/dev/null && echo LEAK-HOME
ls -A %[1]s | grep . && echo HOME-NOT-EMPTY
cat %[2]s/canary 2>/dev/null && echo LEAK-OUTSIDE
touch /etc/lcp-x 2>/dev/null && echo WROTE-ETC
touch /usr/lcp-x 2>/dev/null && echo WROTE-USR
echo x > /tmp/private && cat /tmp/private
cat a.txt
true`, home, outside))
	if r.err != nil || r.report.SetupErr != nil {
		t.Fatalf("run: %v %v\n%s", r.err, r.report.SetupErr, r.stderr)
	}
	for _, bad := range []string{"LEAK", "NOT-EMPTY", "WROTE"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("stdout has %s:\n%s", bad, r.stdout)
		}
	}
	if r.stdout != "x\na" {
		t.Errorf("stdout = %q, want the private /tmp and the workspace", r.stdout)
	}
	for _, p := range []string{"/etc/lcp-x", "/usr/lcp-x", "/tmp/private"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s exists on the host", p)
		}
	}
}

func TestEnvironmentIsTheAllowList(t *testing.T) {
	requireSandbox(t)
	t.Setenv("LCP_TEST_SECRET_TOKEN", "s3cret")
	ws := t.TempDir()
	env := Env(append(os.Environ(), "API_KEY=k"), "/home/x")
	r := runIn(t, &Policy{Workspace: ws, Env: env}, "env; cat /proc/1/environ 2>&1; echo; cat /proc/self/environ")
	if strings.Contains(r.stdout+r.stderr, "s3cret") || strings.Contains(r.stdout, "API_KEY") || strings.Contains(r.stdout, initEnv) {
		t.Errorf("the environment leaked:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "HOME=/home/x") || !strings.Contains(r.stdout, "PATH=") {
		t.Errorf("the environment lacks HOME or PATH:\n%s", r.stdout)
	}
}

func TestEnvFilter(t *testing.T) {
	got := Env([]string{"PATH=/bin", "GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y", "LANG=C", "LC_ALL=C", "HOME=/root",
		"OPENAI_API_KEY=z", "MY_VAR=1", "HTTPS_PROXY=http://u:p@proxy:3128", "HTTP_PROXY=http://proxy:3128",
		"DB_PASSWORD=p", "GIT_AUTHOR_NAME=a", "SENTRY_DSN=d"}, "/h", "MY_VAR", "DB_PASSWORD", "GIT_AUTHOR_NAME")
	want := []string{"PATH=/bin", "LANG=C", "LC_ALL=C", "MY_VAR=1", "HTTP_PROXY=http://proxy:3128", "GIT_AUTHOR_NAME=a", "HOME=/h", "TMPDIR=/tmp"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Env = %q\nwant  %q", got, want)
	}
	for name, secret := range map[string]bool{"API_KEY": true, "GH_PAT": true, "NPM_AUTH": true, "OLDPWD": false,
		"PWD": false, "PATH": false, "SSH_AUTH_SOCK": true, "MONKEY": true, "GOPATH": false, "TERM": false, "KUBECONFIG": false,
		"AZURE_CLIENT_CERTIFICATE_PASSWORD": true, "SESSION_ID": true, "ACCESSTOKEN": true} {
		if IsSecretName(name) != secret {
			t.Errorf("IsSecretName(%s) = %v, want %v", name, !secret, secret)
		}
	}
}

func TestNoNetwork(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for /dev/tcp")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hits := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED'; ip -o link 2>/dev/null | grep -v " lo:" ; true`, port)
	r := runIn(t, &Policy{Workspace: t.TempDir()}, script)
	if strings.Contains(r.stdout, "CONNECTED") || len(hits) > 0 {
		t.Errorf("the sandbox reached the host's loopback:\n%s", r.stdout)
	}
	r = runIn(t, &Policy{Workspace: t.TempDir(), Network: true}, script)
	if !strings.Contains(r.stdout, "CONNECTED") {
		t.Errorf("with Network the sandbox could not connect:\n%s\n%s", r.stdout, r.stderr)
	}
}

// marker makes processes of one test findable on the host.
func marker() string { return strconv.Itoa(30000 + os.Getpid()%9000) }

// survivors lists host PIDs of processes whose command line is
// "sleep <marker>".
func survivors(mark string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Equal(raw, []byte("sleep\x00"+mark+"\x00")) {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !bytes.Contains(st, []byte(") Z ")) {
				out = append(out, pid)
			}
		}
	}
	return out
}

func waitNoSurvivors(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := survivors(mark)
		if len(s) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range s {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v survived the sandbox", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNoSurvivors(t *testing.T) {
	requireSandbox(t)
	mark := marker()
	r := runIn(t, &Policy{Workspace: t.TempDir()}, fmt.Sprintf(
		"setsid sleep %[1]s </dev/null >/dev/null 2>&1 & nohup sleep %[1]s >/dev/null 2>&1 & (sleep %[1]s &) ; echo started", mark))
	if !strings.Contains(r.stdout, "started") {
		t.Fatalf("run: %v %s", r.err, r.stderr)
	}
	waitNoSurvivors(t, mark)
}

// TestSandboxDiesWithTheEngine re-runs the test binary as an "engine" that
// runs a sandboxed sleep, kills it with SIGKILL, and checks that nothing
// of the sandbox outlives it.
func TestSandboxDiesWithTheEngine(t *testing.T) {
	if mark := os.Getenv("LCP_SANDBOX_TEST_ENGINE"); mark != "" {
		ws, _ := os.MkdirTemp("", "engine")
		cmd := exec.Command("/bin/sh", "-c", "setsid sleep "+mark+" & sleep "+mark)
		cmd.Dir = ws
		cmd.Stderr = os.Stderr
		box, err := Wrap(cmd, &Policy{Workspace: ws, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "engine:", err)
			os.Exit(3)
		}
		p, err := startLocked(cmd)
		if err != nil {
			os.Exit(4)
		}
		box.Started()
		err = p.Wait()
		fmt.Fprintf(os.Stderr, "engine: the sandbox ended early: %v %+v\n", err, box.Report())
		os.Exit(0)
	}
	requireSandbox(t)
	mark := marker()
	engine := exec.Command(os.Args[0], "-test.run=^TestSandboxDiesWithTheEngine$")
	engine.Env = append(os.Environ(), "LCP_SANDBOX_TEST_ENGINE="+mark)
	engine.Stderr = os.Stderr
	engine.Stdout = os.Stderr
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(survivors(mark)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(survivors(mark)) < 2 {
		engine.Process.Kill()
		t.Fatal("the sandboxed sleeps never started")
	}
	engine.Process.Kill()
	_ = engine.Wait()
	waitNoSurvivors(t, mark)
}

func TestCopyOnWriteChanges(t *testing.T) {
	requireSandbox(t)
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	for name, content := range map[string]string{"modify.txt": "one\ntwo\nthree\n", "delete.txt": "bye", "chmod.sh": "echo",
		"rename.txt": "r", "touch.txt": "t", "keep.txt": "k", "dir/inner.txt": "i", "linked.txt": "shared", ".git/HEAD": "ref: refs/heads/main\n",
		"gone/x.txt": "x"} {
		write(t, filepath.Join(ws, name), content)
	}
	outsideLink := filepath.Join(tmp, "outside-link.txt")
	if err := os.Link(filepath.Join(ws, "linked.txt"), outsideLink); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, ws)
	time.Sleep(2 * conflictSlack) // older than the run
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, `
echo four >> modify.txt
rm delete.txt
chmod +x chmod.sh
mv rename.txt renamed.txt
touch -d 2001-01-01 touch.txt
mkdir -p newdir/sub && echo new > newdir/sub/new.txt
ln -s /etc/passwd escape
ln -s keep.txt inside
echo changed > linked.txt
echo hook > .git/hooks-new
rm -r gone
mkfifo fifo`)
	if r.err != nil || r.report.SetupErr != nil {
		t.Fatalf("run: %v %v\n%s", r.err, r.report.SetupErr, r.stderr)
	}
	if after := snapshot(t, ws); after != before {
		t.Fatalf("the workspace changed during the run:\n%s\nwant\n%s", after, before)
	}
	var l Ledger
	cs, err := r.box.Changes(&l)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cs.Changes {
		got[c.Path] = fmt.Sprintf("%s %s risky=%v", c.Kind, c.Type, c.Risky)
	}
	want := map[string]string{
		"modify.txt":         "modified file risky=true",
		"delete.txt":         "deleted file risky=true",
		"chmod.sh":           "mode file risky=true",
		"rename.txt":         "deleted file risky=true",
		"renamed.txt":        "added file risky=false",
		"touch.txt":          "touched file risky=true",
		"newdir":             "added folder risky=false",
		"newdir/sub":         "added folder risky=false",
		"newdir/sub/new.txt": "added file risky=false",
		"escape":             "added link risky=true",
		"inside":             "added link risky=false",
		"linked.txt":         "modified file risky=true",
		".git/hooks-new":     "added file risky=true",
		"gone":               "deleted folder risky=true",
		"fifo":               "skipped special file risky=false",
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %q, want %q", p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected change %s: %s", p, got[p])
		}
	}
	sum := cs.Summary(cs.Risky())
	for _, s := range []string{"modified modify.txt", "+four", "deleted delete.txt", "new link escape → /etc/passwd", "+hook"} {
		if !strings.Contains(sum, s) {
			t.Errorf("summary lacks %q:\n%s", s, sum)
		}
	}

	// New things first, as safe mode does; then the rest.
	out := cs.Apply(func(c *Change) bool { return !c.Risky }, &l)
	if len(out.Conflicts) > 0 || len(out.Failed) != 1 { // the FIFO
		t.Fatalf("apply new: conflicts %v failed %v", out.Conflicts, out.Failed)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "newdir/sub/new.txt")); string(b) != "new\n" {
		t.Errorf("new.txt = %q", b)
	}
	if !l.Owns(filepath.Join(ws, "renamed.txt")) {
		t.Error("the ledger does not own renamed.txt")
	}
	if _, err := os.Lstat(filepath.Join(ws, "escape")); err == nil {
		t.Error("the escaping link was applied without approval")
	}
	out = cs.Apply(func(c *Change) bool { return c.Risky }, &l)
	if len(out.Conflicts) > 0 || len(out.Failed) > 0 {
		t.Fatalf("apply risky: conflicts %v failed %v", out.Conflicts, out.Failed)
	}
	check := map[string]string{"modify.txt": "one\ntwo\nthree\nfour\n", "linked.txt": "changed\n", ".git/hooks-new": "hook\n"}
	for p, w := range check {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != w {
			t.Errorf("%s = %q, want %q", p, b, w)
		}
	}
	if b, _ := os.ReadFile(outsideLink); string(b) != "shared" {
		t.Errorf("the hard link outside changed: %q", b)
	}
	for _, p := range []string{"delete.txt", "rename.txt", "gone"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s still exists", p)
		}
	}
	if fi, _ := os.Stat(filepath.Join(ws, "chmod.sh")); fi == nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("chmod.sh is not executable: %v", fi)
	}
}

func TestConflictIsNeverOverwritten(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	write(t, filepath.Join(ws, "f.txt"), "original")
	write(t, filepath.Join(ws, "d.txt"), "original")
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "echo sandbox > f.txt; rm d.txt; echo n > n.txt")
	if r.err != nil {
		t.Fatal(r.err, r.stderr)
	}
	time.Sleep(30 * time.Millisecond)
	write(t, filepath.Join(ws, "f.txt"), "operator's edit")
	write(t, filepath.Join(ws, "d.txt"), "operator's edit")
	write(t, filepath.Join(ws, "n.txt"), "operator's file")
	cs, err := r.box.Changes(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := cs.Apply(func(*Change) bool { return true }, nil)
	if len(out.Conflicts) != 3 || len(out.Applied) != 0 {
		t.Fatalf("conflicts %v applied %v failed %v, want 3 conflicts", out.Conflicts, out.Applied, out.Failed)
	}
	for _, p := range []string{"f.txt", "d.txt"} {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != "operator's edit" {
			t.Errorf("%s = %q", p, b)
		}
	}
}

// A run that starts right after another one applied a file may change or
// delete that file: its recent times are the session's own doing, from
// before the run began. The same recent times from anyone else are a
// conflict.
func TestQuickRunAfterOwnWrite(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	var l Ledger
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "echo one > own.txt")
	if r.err != nil {
		t.Fatal(r.err, r.stderr)
	}
	cs, err := r.box.Changes(&l)
	if err != nil {
		t.Fatal(err)
	}
	if out := cs.Apply(func(*Change) bool { return true }, &l); len(out.Applied) != 1 {
		t.Fatalf("first run: applied %v, conflicts %v, failed %v", out.Applied, out.Conflicts, out.Failed)
	}
	// Someone else's file, written just before the next run begins.
	write(t, filepath.Join(ws, "theirs.txt"), "theirs")
	r = runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "rm own.txt theirs.txt")
	if r.err != nil {
		t.Fatal(r.err, r.stderr)
	}
	cs, err = r.box.Changes(&l)
	if err != nil {
		t.Fatal(err)
	}
	// The set is all or nothing: theirs.txt conflicts, so own.txt stays.
	out := cs.Apply(func(*Change) bool { return true }, &l)
	if len(out.Conflicts) != 1 || out.Conflicts[0].Path != "theirs.txt" || len(out.Withheld) != 1 {
		t.Errorf("whole set: applied %v, conflicts %v, withheld %v, failed %v", out.Applied, out.Conflicts, out.Withheld, out.Failed)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "theirs.txt")); string(b) != "theirs" {
		t.Errorf("theirs.txt = %q: a file changed within the slack by someone else was deleted", b)
	}
	out = cs.Apply(func(c *Change) bool { return c.Path == "own.txt" }, &l)
	if _, err := os.Stat(filepath.Join(ws, "own.txt")); err == nil {
		t.Errorf("own.txt kept: applied %v, conflicts %v, failed %v", out.Applied, out.Conflicts, out.Failed)
	}
}

func TestWriteModeKeepsVCSReadOnly(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".git", "config"), "[core]\n\thooksPath = hooks\n")
	write(t, filepath.Join(ws, "hooks", "pre-commit"), "#!/bin/sh\n")
	r := runIn(t, &Policy{Workspace: ws, Mode: Write}, `
echo x > .git/hooks-planted 2>/dev/null && echo PLANTED
echo x >> hooks/pre-commit 2>/dev/null && echo HOOKED
echo ok > file.txt`)
	if strings.Contains(r.stdout, "PLANTED") || strings.Contains(r.stdout, "HOOKED") {
		t.Errorf("wrote version control files:\n%s", r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "file.txt")); string(b) != "ok\n" {
		t.Errorf("file.txt = %q: direct writes should land", b)
	}
	r = runIn(t, &Policy{Workspace: ws, Mode: Write, WritableVCS: true}, `echo x > .git/allowed`)
	if _, err := os.Stat(filepath.Join(ws, ".git", "allowed")); err != nil {
		t.Errorf("WritableVCS: %v (%s)", err, r.stderr)
	}
}

func TestLimits(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	r := runIn(t, &Policy{Workspace: ws, Limits: Limits{Memory: 256 << 20}},
		py+` -c "b = bytearray(1 << 30); print('ALLOCATED')"`)
	if strings.Contains(r.stdout, "ALLOCATED") || !strings.Contains(r.stderr, "MemoryError") {
		t.Errorf("memory limit: stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = runIn(t, &Policy{Workspace: ws, Mode: Write, Limits: Limits{FileSize: 1 << 20}}, "head -c 2000000 /dev/zero > big; echo $?")
	if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() > 1<<20 {
		t.Errorf("file size limit: %v %v", fi, err)
	}
	r = runIn(t, &Policy{Workspace: ws, Limits: Limits{Processes: 16}},
		"i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done 2>&1 | head -1; echo done")
	// With a pids control group the peak counts its tasks, the init's
	// own threads included, which the group allows 16 of beyond the budget.
	if r.report.PeakProcesses > 16+16 {
		t.Errorf("process limit 16: %d processes at once", r.report.PeakProcesses)
	}
	r = runIn(t, &Policy{Workspace: ws, Limits: Limits{CPUTime: time.Second}}, "while :; do :; done")
	if r.report.Signal != "SIGXCPU" && r.report.Signal != "SIGKILL" {
		t.Errorf("CPU limit: report %+v", r.report)
	}
}

func TestSetupFailureFailsClosed(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	cmd := exec.Command("/no/such/program")
	cmd.Dir = ws
	var errb bytes.Buffer
	cmd.Stderr = &errb
	box, err := Wrap(cmd, &Policy{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	rep := box.Report()
	if rep.SetupErr == nil || !strings.Contains(rep.SetupErr.Error(), "not visible in the sandbox") {
		t.Errorf("SetupErr = %v", rep.SetupErr)
	}
	if _, err := Wrap(exec.Command("true"), &Policy{Workspace: filepath.Join(ws, "missing")}); err == nil {
		t.Error("Wrap accepted a missing workspace")
	}
	if _, err := Wrap(exec.Command("true"), &Policy{Workspace: ws, Env: []string{"GITHUB_TOKEN=x"}}); err == nil {
		t.Error("Wrap accepted a secret in the environment")
	}
}

func TestForceOff(t *testing.T) {
	restore := ForceOff("testing")
	st := Probe()
	if st.Available || !st.Forced || st.Reason != "testing" {
		t.Errorf("Probe = %+v", st)
	}
	if _, err := Wrap(exec.Command("true"), &Policy{Workspace: t.TempDir()}); err == nil {
		t.Error("Wrap worked while forced off")
	}
	restore()
	t.Setenv("LCP_SANDBOX", "off")
	if Probe().Available {
		t.Error("LCP_SANDBOX=off did not switch the sandbox off")
	}
}

// snapshot describes every file of a tree: path, mode, content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWorkspaceOwners checks the identity a root lcp gives the sandbox:
// the owner of a user's workspace, or an unprivileged user for a
// root-owned one (shown as root inside through an idmapped mount).
func TestWorkspaceOwners(t *testing.T) {
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("needs root to own files as another user")
	}
	for _, tc := range []struct {
		name             string
		uid, gid         int
		wantID, wantHost string
	}{
		{"root-owned", 0, 0, "0", "0 65534 1"},
		{"user-owned", 4242, 4243, "4242", "4242 4242 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			write(t, filepath.Join(ws, "f.txt"), "f\n")
			for _, p := range []string{ws, filepath.Join(ws, "f.txt")} {
				if err := os.Chown(p, tc.uid, tc.gid); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(2 * conflictSlack)
			r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "id -u; head -1 /proc/self/uid_map | tr -s ' ' | sed 's/^ //'; echo n > new.txt; echo more >> f.txt; ls -n f.txt | cut -d' ' -f3")
			if r.err != nil || r.report.SetupErr != nil {
				t.Fatalf("run: %v %v %s", r.err, r.report.SetupErr, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != 3 || lines[0] != tc.wantID || lines[1] != tc.wantHost || lines[2] != tc.wantID {
				t.Errorf("inside: %q, want uid %s, map %q, owning its files", lines, tc.wantID, tc.wantHost)
			}
			cs, err := r.box.Changes(nil)
			if err != nil {
				t.Fatal(err)
			}
			out := cs.Apply(func(*Change) bool { return true }, nil)
			if len(out.Applied) != 2 {
				t.Fatalf("applied %v, conflicts %v, failed %v", out.Applied, out.Conflicts, out.Failed)
			}
			for _, name := range []string{"new.txt", "f.txt"} {
				var st syscall.Stat_t
				if err := syscall.Stat(filepath.Join(ws, name), &st); err != nil {
					t.Fatal(err)
				}
				if int(st.Uid) != tc.uid || int(st.Gid) != tc.gid {
					t.Errorf("%s is owned by %d:%d, want %d:%d", name, st.Uid, st.Gid, tc.uid, tc.gid)
				}
			}
		})
	}
}

// TestUnprivileged runs the sandbox from lcp running as a normal user: the
// init then binds host paths itself (it cannot be handed clones), and
// maps only that user.
func TestUnprivileged(t *testing.T) {
	if os.Getenv("LCP_SANDBOX_TEST_UNPRIV") != "" {
		unprivilegedChild(t)
		return
	}
	requireSandbox(t)
	setpriv, err := exec.LookPath("setpriv")
	if os.Getuid() != 0 || err != nil {
		t.Skip("needs root and setpriv to become a normal user")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "sandbox.test")
	raw, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=4242", "--regid=4242", "--clear-groups", bin, "-test.run=^TestUnprivileged$", "-test.v")
	cmd.Env = []string{"LCP_SANDBOX_TEST_UNPRIV=1", "PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp"}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("as a normal user: %s", out)
	}
	if err != nil {
		t.Fatalf("as a normal user: %v\n%s", err, out)
	}
}

func unprivilegedChild(t *testing.T) {
	if os.Getuid() == 0 {
		t.Fatal("still root")
	}
	requireSandbox(t)
	ws := t.TempDir()
	write(t, filepath.Join(ws, "f.txt"), "f\n")
	time.Sleep(2 * conflictSlack)
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, "id -u; echo n > new.txt; echo more >> f.txt; touch /etc/x 2>/dev/null && echo WROTE; true")
	if r.err != nil || r.report.SetupErr != nil {
		t.Fatalf("run: %v %v %s", r.err, r.report.SetupErr, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != strconv.Itoa(os.Getuid()) {
		t.Errorf("stdout = %q, want the user's own uid", got)
	}
	// A normal user cannot write the root's control groups: the fallback
	// bounds the run, and says so.
	if !strings.HasPrefix(r.report.Accounting, "rlimits") || r.report.Exceeded != "" {
		t.Errorf("accounting %q, exceeded %q", r.report.Accounting, r.report.Exceeded)
	}
	fork := runIn(t, &Policy{Workspace: ws, Limits: Limits{Processes: 16}}, "for i in $(seq 40); do sleep 30 & done; wait")
	if fork.err == nil || !strings.Contains(fork.stderr, "fork") && !strings.Contains(fork.stderr, "Resource temporarily unavailable") {
		t.Errorf("40 processes in a run of 16: err %v, stderr %s", fork.err, fork.stderr)
	}
	cs, err := r.box.Changes(nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := cs.Apply(func(*Change) bool { return true }, nil); len(out.Applied) != 2 {
		t.Fatalf("applied %v, conflicts %v, failed %v", out.Applied, out.Conflicts, out.Failed)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "f\nmore\n" {
		t.Errorf("f.txt = %q", b)
	}
}
