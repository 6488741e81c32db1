package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF runs a classic BPF seccomp program over one seccomp_data, as the
// kernel would, for the instructions the filter uses.
func runBPF(t *testing.T, prog []unix.SockFilter, data []byte) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if int(in.K)+4 > len(data) || in.K%4 != 0 {
				t.Fatalf("pc %d: load at %d", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var cond bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				cond = acc == in.K
			case unix.BPF_JGE:
				cond = acc >= in.K
			case unix.BPF_JSET:
				cond = acc&in.K != 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("pc %d: instruction %#x not handled", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// seccompData lays out a struct seccomp_data.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], nr)
	binary.LittleEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// bpfCase is one system call and the filter's expected answer.
type bpfCase struct {
	name string
	arch uint32
	nr   uint32
	args []uint64
	want uint32
}

func TestSeccompProgram(t *testing.T) {
	if nativeArch == nil {
		t.Skip("no seccomp table for this architecture")
	}
	prog, err := seccompProgram(nativeArch)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d instructions", len(prog))
	nr := func(name string) uint32 {
		n, ok := nativeArch.nr[name]
		if !ok {
			t.Fatalf("no number for %s", name)
		}
		return n
	}
	native := nativeArch.audit
	tests := []bpfCase{
		{"read", native, unix.SYS_READ, nil, retAllow},
		{"openat", native, unix.SYS_OPENAT, nil, retAllow},
		{"execve", native, unix.SYS_EXECVE, nil, retAllow},
		{"wait4", native, unix.SYS_WAIT4, nil, retAllow},
		{"seccomp itself (stacking)", native, unix.SYS_SECCOMP, nil, retAllow},
		{"a negative number", native, 0xffffffff, nil, retAllow},
		{"fork-like clone", native, nr("clone"), []uint64{17}, retAllow},
		{"thread clone", native, nr("clone"), []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, retAllow},
		{"clone CLONE_NEWUSER", native, nr("clone"), []uint64{unix.CLONE_NEWUSER | 17}, retEPERM},
		{"clone CLONE_NEWNS", native, nr("clone"), []uint64{unix.CLONE_NEWNS}, retEPERM},
		{"clone CLONE_NEWNET", native, nr("clone"), []uint64{unix.CLONE_NEWNET}, retEPERM},
		{"clone3", native, nr("clone3"), nil, retNOSYS},
		{"unshare CLONE_FS", native, nr("unshare"), []uint64{unix.CLONE_FS | unix.CLONE_FILES}, retAllow},
		{"unshare CLONE_NEWUSER", native, nr("unshare"), []uint64{unix.CLONE_NEWUSER}, retEPERM},
		{"unshare CLONE_NEWTIME", native, nr("unshare"), []uint64{unix.CLONE_NEWTIME}, retEPERM},
		{"unshare CLONE_NEWPID", native, nr("unshare"), []uint64{unix.CLONE_NEWPID}, retEPERM},
		{"ptrace TRACEME", native, nr("ptrace"), []uint64{unix.PTRACE_TRACEME}, retAllow},
		{"ptrace DETACH", native, nr("ptrace"), []uint64{unix.PTRACE_DETACH, 5}, retAllow},
		{"ptrace ATTACH", native, nr("ptrace"), []uint64{unix.PTRACE_ATTACH, 1}, retEPERM},
		{"ptrace SEIZE", native, nr("ptrace"), []uint64{unix.PTRACE_SEIZE, 1}, retEPERM},
		{"ioctl TIOCGWINSZ", native, nr("ioctl"), []uint64{1, unix.TIOCGWINSZ}, retAllow},
		{"ioctl TIOCSTI", native, nr("ioctl"), []uint64{0, unix.TIOCSTI}, retEPERM},
		{"ioctl TIOCSTI high bits", native, nr("ioctl"), []uint64{0, 1<<32 | unix.TIOCSTI}, retEPERM},
		{"ioctl TIOCLINUX", native, nr("ioctl"), []uint64{0, unix.TIOCLINUX}, retEPERM},
		{"personality query", native, nr("personality"), []uint64{0xffffffff}, retAllow},
		{"personality PER_LINUX", native, nr("personality"), []uint64{0}, retAllow},
		{"personality ADDR_NO_RANDOMIZE", native, nr("personality"), []uint64{addrNoRandomize}, retEPERM},
		{"foreign architecture", unix.AUDIT_ARCH_I386, unix.SYS_READ, nil, retKill},
		{"arm32 compat", unix.AUDIT_ARCH_ARM, 0, nil, retKill},
	}
	if nativeArch.x32 {
		tests = append(tests, bpfCase{"x32 read", native, 0x40000000, nil, retKill}, bpfCase{"x32 unshare", native, 0x40000000 | nr("unshare"), []uint64{unix.CLONE_NEWUSER}, retKill})
	}
	// Every unconditional rule denies its call, whatever the arguments.
	for _, r := range seccompRules {
		n, ok := nativeArch.nr[r.name]
		if !ok {
			continue
		}
		switch r.kind {
		case denyAlways:
			tests = append(tests, bpfCase{r.name, native, n, []uint64{0, 0}, retEPERM})
		case enosysAlways:
			tests = append(tests, bpfCase{r.name, native, n, nil, retNOSYS})
		}
	}
	for _, tc := range tests {
		if got := runBPF(t, prog, seccompData(tc.arch, tc.nr, tc.args...)); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// TestSeccompRulesHaveNumbers checks that every rule names a system call of
// the native table (iopl and ioperm exist on x86 only), and no call twice.
func TestSeccompRulesHaveNumbers(t *testing.T) {
	if nativeArch == nil {
		t.Skip("no seccomp table for this architecture")
	}
	seen := map[string]bool{}
	for _, r := range seccompRules {
		if seen[r.name] {
			t.Errorf("%s twice", r.name)
		}
		seen[r.name] = true
		if _, ok := nativeArch.nr[r.name]; !ok && r.name != "iopl" && r.name != "ioperm" {
			t.Errorf("%s has no number on %s", r.name, nativeArch.name)
		}
		if r.why == "" {
			t.Errorf("%s: no reason", r.name)
		}
	}
	if len(nativeArch.nr) > len(seccompRules) {
		t.Errorf("the table has %d numbers for %d rules", len(nativeArch.nr), len(seccompRules))
	}
}

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
	if nativeArch == nil {
		t.Skip("no seccomp table for this architecture")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	py, paths := Python("python3")
	args := []string{"-c", denyProbe}
	for name, n := range nativeArch.nr {
		args = append(args, fmt.Sprintf("%s=%d", name, n))
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
	eperm := fmt.Sprint(int(unix.EPERM))
	for _, r := range seccompRules {
		if _, ok := nativeArch.nr[r.name]; !ok {
			continue
		}
		res := got[r.name]
		if len(res) == 0 {
			t.Errorf("%s: not probed", r.name)
			continue
		}
		want := eperm
		if r.kind == enosysAlways {
			want = fmt.Sprint(int(unix.ENOSYS))
		}
		if r.name == "personality" || r.name == "unshare" {
			if len(res) != 2 || res[0] != want || res[1] != "ok" {
				t.Errorf("%s: %v, want [%s ok]", r.name, res, want)
			}
			continue
		}
		for _, x := range res {
			if x != want {
				t.Errorf("%s: %s, want errno %s", r.name, x, want)
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
