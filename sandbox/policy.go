package sandbox

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Mode is how a sandboxed run sees its workspace.
type Mode int

const (
	// ReadOnly shows the workspace read-only.
	ReadOnly Mode = iota + 1
	// Write lets the run write the workspace directly, except its version
	// control folders (.git, .hg, ...), which stay read-only unless
	// Policy.WritableVCS says otherwise.
	Write
	// CopyOnWrite lets the run write a copy-on-write view of the
	// workspace: the real workspace does not change while it runs, and
	// Box.Changes reports what it changed afterwards, to be applied with
	// ChangeSet.Apply.
	CopyOnWrite
)

// String returns "read-only", "write" or "copy-on-write".
func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "read-only"
	case Write:
		return "write"
	case CopyOnWrite:
		return "copy-on-write"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Policy says what one sandboxed run may see and do. The zero value of
// every field is the most restrictive choice except where noted.
type Policy struct {
	// Workspace is the directory the run works in, shown at its own path.
	// Required.
	Workspace string
	// Mode is how the workspace is shown; zero means ReadOnly.
	Mode Mode
	// WritableVCS lets a Write run change the version control folders of
	// the workspace (.git, .hg, .svn, ...), which are read-only otherwise:
	// git runs hooks and configuration from there outside the sandbox
	// later. In CopyOnWrite they are part of the change set instead.
	WritableVCS bool
	// Network keeps the host's network. Without it the run has its own
	// network namespace with only a loopback interface, and Landlock (where
	// the kernel has it) denies TCP too.
	Network bool
	// Egress, when set, is the run's only way out of its own network
	// namespace (Network must be false): the sandbox's init listens on
	// 127.0.0.1:EgressPort inside it and hands every connection it
	// accepts to Egress, outside the run (package egress serves them as a
	// proxy); HTTP_PROXY and HTTPS_PROXY (and their lower-case forms)
	// point there, NO_PROXY names the loopback. There is no other route
	// and no DNS inside.
	Egress func(net.Conn)
	// EgressPort is the proxy's port inside the run; 0 means
	// DefaultEgressPort.
	EgressPort int
	// ReadPaths are more host paths shown read-only at their own path
	// (interpreter prefixes, tool folders, a library's folder...).
	// Missing paths are skipped.
	ReadPaths []string
	// WritePaths are host paths shown read-write at their own path: an
	// approved escalation. Missing paths are skipped.
	WritePaths []string
	// Caches are host folders shown at their own path over a throwaway
	// layer: reads see the real cache, writes succeed and vanish with the
	// run (Go's build cache insists on writing). Missing paths are skipped.
	Caches []string
	// Home is the home directory to hide; "" means the current user's.
	// It is replaced by an empty private folder; ReadPaths, WritePaths
	// and Caches inside it are shown.
	Home string
	// Env is the command's whole environment: nothing else reaches it.
	// Build it with Env (the allow-list); Wrap refuses variables whose
	// names look like secrets.
	Env []string
	// GivenEnv are KEY=VALUE variables the configuration gives this run
	// by value (an MCP server entry's "env"): they are added to Env as
	// they are, even when their names look like secrets, since the person
	// wrote them for this run.
	GivenEnv []string
	// Limits bound the run's resources; zero fields take the defaults.
	Limits Limits
	// NoSeccomp starts the run without the seccomp filter that denies
	// system calls no tool needs (io_uring, keyrings, bpf, new namespaces,
	// mounts, ptrace attach, ...; see docs/sandbox.md). LCP_SECCOMP=off in
	// lcp's environment does the same for every run.
	NoSeccomp bool
}

// DefaultEgressPort is the port of the egress proxy inside a run.
const DefaultEgressPort = 3128

// Limits bound the resources of a sandboxed run. Zero fields mean the
// defaults below; a negative value means no limit of the sandbox's own
// (a per-process limit then stays what lcp's own is).
//
// TotalMemory, Disk, Processes and WallTime are the run's budget, for the
// whole run rather than per process: where the kernel's accounting can be
// used (cgroup v1 memory and pids controllers, or cgroup v2 with them
// delegated) a run that goes over one of them is ended and its Report
// names it (Report.Exceeded). The other fields bound each process.
type Limits struct {
	// TotalMemory caps the memory of the whole run, in bytes: every
	// process, tmpfs (/tmp, /dev/shm, the hidden home), shared memory,
	// memfd, and the copy-on-write layer, which lives in memory too.
	TotalMemory int64
	// Disk caps the copy-on-write layer of the workspace (changed and new
	// files), in bytes, where lcp can give it a size-capped filesystem
	// (lcp runs as root); it is part of TotalMemory as well. A Write run
	// has no layer: Disk caps the bytes its processes write to storage,
	// net of what they delete before it reaches the disk, as the
	// kernel's per-process I/O accounting counts them (read about every
	// 100 ms, so a fast writer can go past it by what it writes in that
	// time; each file stays within FileSize), since the run started or
	// since its current unit of work began (Box.BeginUnit: a library
	// worker's call).
	Disk int64
	// WallTime ends the run after this long; zero or negative means none
	// (the built-in tools have their own time limit).
	WallTime time.Duration
	// Memory caps the private writable memory of each process
	// (RLIMIT_DATA), in bytes. Address-space reservations that runtimes
	// make (V8, the JVM, Go) do not count, so they keep working.
	Memory int64
	// Processes caps the processes and threads of the run at once: the
	// pids controller where there is one, and RLIMIT_NPROC (counted in the
	// run's own user namespace).
	Processes int
	// FileSize caps the size of each file a process writes
	// (RLIMIT_FSIZE), in bytes.
	FileSize int64
	// CPUTime caps the CPU time of each process (RLIMIT_CPU).
	CPUTime time.Duration
	// OpenFiles caps the open files of each process (RLIMIT_NOFILE).
	OpenFiles int
	// TmpSize caps the private /tmp, the hidden home's scratch space and
	// /dev/shm, each, in bytes (they live in memory).
	TmpSize int64
}

// The default limits.
const (
	DefaultTotalMemory = 2 << 30
	DefaultDisk        = 1 << 30
	DefaultMemory      = 2 << 30
	DefaultProcesses   = 1024
	DefaultFileSize    = 4 << 30
	DefaultCPUTime     = 10 * time.Minute
	DefaultOpenFiles   = 4096
	DefaultTmpSize     = 1 << 30
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.TotalMemory == 0 {
		l.TotalMemory = DefaultTotalMemory
	}
	if l.Disk == 0 {
		l.Disk = DefaultDisk
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.Processes == 0 {
		l.Processes = DefaultProcesses
	}
	if l.FileSize == 0 {
		l.FileSize = DefaultFileSize
	}
	if l.CPUTime == 0 {
		l.CPUTime = DefaultCPUTime
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = DefaultOpenFiles
	}
	if l.TmpSize == 0 {
		l.TmpSize = DefaultTmpSize
	}
	return l
}

// ErrUnsupported is returned (wrapped) where the kernel or the system
// cannot provide the sandbox: not Linux, user namespaces refused, a
// locked-down container. Status says why.
var ErrUnsupported = errors.New("the kernel sandbox is unavailable")

// SetupError is the error of a sandbox whose set-up failed: the command
// did not run.
type SetupError struct {
	Step string // what failed: "mount /usr", "pivot_root", "landlock", ...
	Err  error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("sandbox set-up failed (%s): %v; the command did not run", e.Step, e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }
