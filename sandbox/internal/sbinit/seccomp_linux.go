package sbinit

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Seccomp is the sandbox's third layer, after the namespaces and Landlock:
// a classic BPF filter the init installs on its own thread right before it
// starts the command (so after its mounts and Landlock), inherited by
// every process of the run. It is a deny list: the system calls below
// fail with EPERM, everything else is allowed. A call made with another
// architecture's numbers (i386 through int 0x80, x32, arm32 compat) kills
// the process: the deny list is written in the native table's numbers and
// cannot be applied to another.

// SeccompEnv, set to "off" (or 0, false, no) in lcp's environment, starts
// sandboxed runs without the filter, for hosts whose tools need a denied
// call.
const SeccompEnv = "LCP_SECCOMP"

// SeccompWanted reports whether runs get the filter (the default).
func SeccompWanted() bool {
	switch strings.ToLower(os.Getenv(SeccompEnv)) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// sysArch describes the native system-call table the filter is written
// for (see seccomp_amd64.go, seccomp_arm64.go).
type sysArch struct {
	name  string
	audit uint32 // AUDIT_ARCH_* of seccomp_data.arch
	// x32 is true on x86_64, whose numbers at or above 0x40000000 select
	// the x32 table under the same audit architecture.
	x32 bool
	// nr maps the names of seccompRules to this table's numbers; a name
	// absent here does not exist on the architecture.
	nr map[string]uint32
}

// ruleKind says when a seccompRule denies its call.
type ruleKind int

const (
	denyAlways   ruleKind = iota // every call
	denyIfEqual                  // the argument's low 32 bits equal one of vals
	denyIfAnyBit                 // the argument's low 32 bits share a bit with mask
	denyNoASLR                   // personality: ADDR_NO_RANDOMIZE set, except the query 0xffffffff
	enosysAlways                 // fails with ENOSYS (callers fall back)
)

// seccompRule is one system call the filter restricts.
type seccompRule struct {
	name string
	kind ruleKind
	arg  int // the argument examined (denyIfEqual, denyIfAnyBit, denyNoASLR)
	vals []uint32
	mask uint32
	why  string
}

// nsFlags are the CLONE_NEW* flags that create namespaces; the filter
// denies them to clone and unshare (a new user namespace would give the
// command every capability inside it, and the kernel's namespace code to
// attack). CLONE_NEWTIME shares its bit with clone's exit signal, so it is
// checked for unshare only.
const (
	nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	unshareFlags = nsFlags | unix.CLONE_NEWTIME
)

// seccompRules is the deny list, in one place. Every entry has a test.
var seccompRules = []seccompRule{
	{name: "io_uring_setup", why: "io_uring: a large kernel surface; callers fall back to ordinary calls"},
	{name: "io_uring_enter", why: "io_uring"},
	{name: "io_uring_register", why: "io_uring"},
	{name: "keyctl", why: "kernel keyrings are shared beyond the run"},
	{name: "add_key", why: "kernel keyrings"},
	{name: "request_key", why: "kernel keyrings"},
	{name: "bpf", why: "BPF programs and maps"},
	{name: "perf_event_open", why: "performance counters: side channels"},
	{name: "userfaultfd", why: "a classic aid to kernel exploits"},
	{name: "kexec_load", why: "loads a new kernel"},
	{name: "kexec_file_load", why: "loads a new kernel"},
	{name: "init_module", why: "kernel modules"},
	{name: "finit_module", why: "kernel modules"},
	{name: "delete_module", why: "kernel modules"},
	{name: "mount", why: "the sandbox's mounts are final"},
	{name: "umount2", why: "the sandbox's mounts are final"},
	{name: "pivot_root", why: "the sandbox's root is final"},
	{name: "chroot", why: "the sandbox's root is final"},
	{name: "open_tree", why: "the new mount API"},
	{name: "move_mount", why: "the new mount API"},
	{name: "fsopen", why: "the new mount API"},
	{name: "fsconfig", why: "the new mount API"},
	{name: "fsmount", why: "the new mount API"},
	{name: "fspick", why: "the new mount API"},
	{name: "mount_setattr", why: "the new mount API"},
	{name: "open_by_handle_at", why: "opens files by handle, past the mounts"},
	{name: "setns", why: "joins other namespaces"},
	{name: "unshare", kind: denyIfAnyBit, arg: 0, mask: unshareFlags, why: "new namespaces (CLONE_FS, CLONE_FILES stay allowed)"},
	{name: "clone", kind: denyIfAnyBit, arg: 0, mask: nsFlags, why: "new namespaces (threads and forks stay allowed)"},
	{name: "clone3", kind: enosysAlways, why: "its flags are out of the filter's reach; C libraries fall back to clone"},
	{name: "ptrace", kind: denyIfEqual, arg: 0, vals: []uint32{unix.PTRACE_ATTACH, unix.PTRACE_SEIZE},
		why: "attaching to a running process (a tracer of its own child still works)"},
	{name: "swapon", why: "swap"},
	{name: "swapoff", why: "swap"},
	{name: "reboot", why: "the host"},
	{name: "acct", why: "process accounting"},
	{name: "settimeofday", why: "the host's clock"},
	{name: "clock_settime", why: "the host's clock"},
	{name: "clock_adjtime", why: "the host's clock"},
	{name: "adjtimex", why: "the host's clock"},
	{name: "quotactl", why: "disk quotas"},
	{name: "vhangup", why: "hangs up the terminal"},
	{name: "iopl", why: "I/O ports"},
	{name: "ioperm", why: "I/O ports"},
	{name: "ioctl", kind: denyIfEqual, arg: 1, vals: []uint32{unix.TIOCSTI, unix.TIOCLINUX},
		why: "TIOCSTI and TIOCLINUX type into the terminal"},
	{name: "personality", kind: denyNoASLR, arg: 0, why: "switching address-space randomisation off"},
}

// BPF return values.
const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	// retKill kills the whole process (kernels before 4.14 read it as
	// killing the thread).
	retKill = unix.SECCOMP_RET_KILL_PROCESS
)

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16 // args[6], 64 bits each; the low half first (little endian)
)

// bpfAsm assembles a classic BPF program with forward jumps to labels.
type bpfAsm struct {
	ins    []unix.SockFilter
	labels map[string]int
	fix    []bpfFix
}

type bpfFix struct {
	at     int
	jt, jf string
}

func (a *bpfAsm) emit(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *bpfAsm) load(off uint32) { a.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func (a *bpfAsm) ret(k uint32)    { a.emit(unix.BPF_RET|unix.BPF_K, k) }

// jump emits a conditional jump (BPF_JEQ, BPF_JGE, BPF_JSET against k) to
// label jt when true, jf when false; "" is the next instruction.
func (a *bpfAsm) jump(op uint16, k uint32, jt, jf string) {
	a.fix = append(a.fix, bpfFix{at: len(a.ins), jt: jt, jf: jf})
	a.emit(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (a *bpfAsm) label(name string) { a.labels[name] = len(a.ins) }

func (a *bpfAsm) assemble() ([]unix.SockFilter, error) {
	off := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok {
			return 0, fmt.Errorf("seccomp: no label %q", label)
		}
		d := to - from - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("seccomp: jump to %q out of range (%d)", label, d)
		}
		return uint8(d), nil
	}
	for _, f := range a.fix {
		jt, err := off(f.at, f.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(f.at, f.jf)
		if err != nil {
			return nil, err
		}
		a.ins[f.at].Jt, a.ins[f.at].Jf = jt, jf
	}
	if len(a.ins) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: %d instructions, more than the kernel takes", len(a.ins))
	}
	return a.ins, nil
}

// seccompProgram builds the filter for arch.
func seccompProgram(arch *sysArch) ([]unix.SockFilter, error) {
	a := &bpfAsm{labels: map[string]int{}}
	a.load(offArch)
	a.jump(unix.BPF_JEQ, arch.audit, "", "kill")
	a.load(offNr)
	if arch.x32 {
		// Negative numbers reach no table (the kernel answers ENOSYS);
		// 0x40000000 and up are x32's.
		a.jump(unix.BPF_JGE, 0x80000000, "allow", "")
		a.jump(unix.BPF_JGE, 0x40000000, "kill", "")
	}
	var args []seccompRule
	for _, r := range seccompRules {
		nr, ok := arch.nr[r.name]
		if !ok {
			continue
		}
		switch r.kind {
		case denyAlways:
			a.jump(unix.BPF_JEQ, nr, "eperm", "")
		case enosysAlways:
			a.jump(unix.BPF_JEQ, nr, "enosys", "")
		default:
			a.jump(unix.BPF_JEQ, nr, "arg:"+r.name, "")
			args = append(args, r)
		}
	}
	a.label("allow")
	a.ret(retAllow)
	// BPF jumps only forward: each argument check ends in its own return.
	for _, r := range args {
		a.label("arg:" + r.name)
		a.load(offArgs + 8*uint32(r.arg))
		switch r.kind {
		case denyIfEqual:
			for _, v := range r.vals {
				a.jump(unix.BPF_JEQ, v, "eperm", "")
			}
			a.ret(retAllow)
		case denyIfAnyBit:
			a.jump(unix.BPF_JSET, r.mask, "eperm", "")
			a.ret(retAllow)
		case denyNoASLR:
			a.jump(unix.BPF_JEQ, 0xffffffff, "ok:"+r.name, "")
			a.jump(unix.BPF_JSET, addrNoRandomize, "eperm", "")
			a.label("ok:" + r.name)
			a.ret(retAllow)
		default:
			return nil, fmt.Errorf("seccomp: rule %s: unknown kind %d", r.name, r.kind)
		}
	}
	a.label("eperm")
	a.ret(retEPERM)
	a.label("enosys")
	a.ret(retNOSYS)
	a.label("kill")
	a.ret(retKill)
	return a.assemble()
}

// errNoSeccompArch is returned on architectures the filter has no table
// for; the run goes on without it, with a warning.
var errNoSeccompArch = errors.New("no seccomp filter for this architecture")

// installSeccomp installs the filter on the calling thread, which must
// have no_new_privs set; the processes it starts inherit it.
func installSeccomp() error {
	if nativeArch == nil {
		return errNoSeccompArch
	}
	prog, err := seccompProgram(nativeArch)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("install the seccomp filter: %w (%s=off in lcp's environment runs without it)", errno, SeccompEnv)
	}
	return nil
}

// addrNoRandomize is personality(2)'s ADDR_NO_RANDOMIZE.
const addrNoRandomize = 0x0040000

// SeccompStatus describes the filter for Status.
func SeccompStatus() string {
	switch {
	case !SeccompWanted():
		return "off (" + SeccompEnv + "=" + os.Getenv(SeccompEnv) + ")"
	case nativeArch == nil:
		return "none (" + errNoSeccompArch.Error() + ")"
	}
	return fmt.Sprintf("on (a third layer: %d system calls denied or narrowed on %s)", len(nativeArch.nr), nativeArch.name)
}

// DeniedCall is a system call of the deny list that exists on this
// architecture: its number, and the errno the filter answers a denied
// use of it with.
type DeniedCall struct {
	Name  string
	Nr    uint32
	Errno unix.Errno
}

// DeniedCalls lists the deny list's calls of the native table, for the
// sandbox's tests that probe the filter from inside a run; nil on an
// architecture without a table.
func DeniedCalls() []DeniedCall {
	if nativeArch == nil {
		return nil
	}
	var out []DeniedCall
	for _, r := range seccompRules {
		n, ok := nativeArch.nr[r.name]
		if !ok {
			continue
		}
		e := unix.EPERM
		if r.kind == enosysAlways {
			e = unix.ENOSYS
		}
		out = append(out, DeniedCall{Name: r.name, Nr: n, Errno: e})
	}
	return out
}
