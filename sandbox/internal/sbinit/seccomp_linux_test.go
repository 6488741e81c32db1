package sbinit

import (
	"encoding/binary"
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
