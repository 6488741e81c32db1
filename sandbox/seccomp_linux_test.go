package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lcptools/lcp/sandbox/internal/sbinit"
)

// denyProbe is a Python script that makes each denied call (with
// arguments that would succeed or fail differently without the filter)
// and prints "name errno".
const denyProbe = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nrs = dict(a.split("=") for a in sys.argv[1:])
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(int(nrs[name])), *[ctypes.c_long(a) for a in args])
    if r == 0 and name == "clone":
        os._exit(0)
    print(name, ctypes.get_errno() if r < 0 else "ok", flush=True)
buf = ctypes.create_string_buffer(256)
p = ctypes.addressof(buf)
call("io_uring_setup", 8, p)
call("io_uring_enter", 0, 0, 0, 0, 0, 0)
call("io_uring_register", 0, 0, 0, 0)
call("keyctl", 0, -3, 0)
call("add_key", 0, 0, 0, 0, -3)
call("request_key", 0, 0, 0, 0)
call("bpf", 0, p, 0)
call("perf_event_open", p, 0, -1, -1, 0)
call("userfaultfd", 0)
call("kexec_load", 0, 0, 0, 0)
call("kexec_file_load", -1, -1, 0, 0, 0)
call("init_module", 0, 0, 0)
call("finit_module", -1, 0, 0)
call("delete_module", 0, 0)
call("mount", 0, 0, 0, 0, 0)
call("umount2", 0, 0)
call("pivot_root", 0, 0)
call("chroot", 0)
call("open_tree", -100, 0, 0)
call("move_mount", -1, 0, -1, 0, 0)
call("fsopen", 0, 0)
call("fsconfig", -1, 0, 0, 0, 0)
call("fsmount", -1, 0, 0)
call("fspick", -100, 0, 0)
call("mount_setattr", -1, 0, 0, 0, 0)
call("open_by_handle_at", -1, 0, 0)
call("setns", -1, 0)
call("unshare", 0x10000000)
call("clone", 0x10000000 | 17, 0, 0, 0, 0)
call("ptrace", 16, os.getppid(), 0, 0)
call("ptrace", 0x4206, 1, 0, 0)
call("swapon", 0, 0)
call("swapoff", 0)
call("reboot", 0, 0, 0, 0)
call("acct", 0)
call("settimeofday", 0, 0)
call("clock_settime", 0, p)
call("clock_adjtime", 0, p)
call("adjtimex", p)
call("quotactl", 0, 0, 0, 0)
call("vhangup")
if "iopl" in nrs:
    call("iopl", 3)
    call("ioperm", 0, 1, 1)
call("ioctl", 0, 0x5412, p)
call("ioctl", 0, 0x541c, p)
call("personality", 0x0040000)
call("clone3", 0, 0)
# Allowed: a fork, a query of the personality, unshare of the file table.
call("personality", 0xffffffff)
call("unshare", 0x400)
pid = os.fork()
if pid == 0:
    os._exit(7)
print("fork", os.waitpid(pid, 0)[1] >> 8, flush=True)
`

func TestSeccompDeniesInTheSandbox(t *testing.T) {
	requireSandbox(t)
	denied := sbinit.DeniedCalls()
	if denied == nil {
		t.Skip("no seccomp table for this architecture")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	py, paths := Python("python3")
	args := []string{"-c", denyProbe}
	for _, d := range denied {
		args = append(args, fmt.Sprintf("%s=%d", d.Name, d.Nr))
	}
	run := func(off bool) map[string][]string {
		p := &Policy{Workspace: t.TempDir(), ReadPaths: paths, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, NoSeccomp: off}
		r := runCmd(t, p, py, args...)
		if r.err != nil {
			t.Fatalf("probe (seccomp off %v): %v\n%s%s", off, r.err, r.stdout, r.stderr)
		}
		got := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			name, res, _ := strings.Cut(line, " ")
			got[name] = append(got[name], res)
		}
		return got
	}
	got := run(false)
	for _, r := range denied {
		res := got[r.Name]
		if len(res) == 0 {
			t.Errorf("%s: not probed", r.Name)
			continue
		}
		want := fmt.Sprint(int(r.Errno))
		if r.Name == "personality" || r.Name == "unshare" {
			if len(res) != 2 || res[0] != want || res[1] != "ok" {
				t.Errorf("%s: %v, want [%s ok]", r.Name, res, want)
			}
			continue
		}
		for _, x := range res {
			if x != want {
				t.Errorf("%s: %s, want errno %s", r.Name, x, want)
			}
		}
	}
	if f := got["fork"]; len(f) != 1 || f[0] != "7" {
		t.Errorf("fork: %v", f)
	}
	// Without the filter the same calls fail for other reasons (or succeed
	// where they are harmless), so the test above sees the filter's work.
	off := run(true)
	differs := 0
	for _, name := range []string{"io_uring_setup", "unshare", "ioctl", "perf_event_open", "userfaultfd", "clone3"} {
		if len(off[name]) > 0 && off[name][0] != got[name][0] {
			differs++
		}
	}
	if differs == 0 {
		t.Errorf("seccomp off answers as on: %v", off)
	}
}

// TestSeccompKeepsEverydayWork runs common commands under the filter.
func TestSeccompKeepsEverydayWork(t *testing.T) {
	requireSandbox(t)
	for _, p := range []string{"/usr/bin/python3", "/usr/bin/git", "/usr/bin/tar", "/usr/bin/make"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("needs %s", p)
		}
	}
	ws := t.TempDir()
	script := `set -e
mkdir d && echo hi > d/a.txt
tar czf d.tgz d && tar tzf d.tgz >/dev/null
git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && git status --short && cd ..
printf 'all:\n\t@echo made\n' > Makefile && make -s
/usr/bin/python3 -c 'import threading, subprocess, multiprocessing, asyncio; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join(); print(subprocess.run(["true"]).returncode); asyncio.run(asyncio.sleep(0))'
/usr/bin/python3 -m venv --without-pip .v && .v/bin/python -c 'print("venv")'
if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then /usr/bin/python3 -m pip list >/dev/null && echo pip; else echo pip; fi
echo done`
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, script)
	if r.err != nil || !strings.Contains(r.stdout, "done") {
		t.Fatalf("everyday commands: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	for _, want := range []string{"made", "thread", "venv", "pip"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in %s", want, r.stdout)
		}
	}
}

// TestSeccompTracerOfOwnChild: strace (PTRACE_TRACEME, its children by
// options) works; attaching to another process does not.
func TestSeccompTracerOfOwnChild(t *testing.T) {
	requireSandbox(t)
	if _, err := os.Stat("/usr/bin/strace"); err != nil {
		t.Skip("needs /usr/bin/strace")
	}
	r := runIn(t, &Policy{Workspace: t.TempDir()}, `/usr/bin/strace -f -qq -e trace=none /bin/echo traced; sleep 30 & /usr/bin/strace -qq -p $! -e trace=none 2>&1; echo "attach $?"; kill $!`)
	if !strings.Contains(r.stdout, "traced") {
		t.Errorf("strace of a child: %s %s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Operation not permitted") || strings.Contains(r.stdout, "attach 0") {
		t.Errorf("strace -p: %s %s", r.stdout, r.stderr)
	}
}
