package sbinit

// The parent (lcp) and the sandbox's init speak through a memfd holding a
// Config (Config.Encode, in the format of wire.go), handed over as an
// inherited descriptor, and a pipe on which the init writes status lines
// (Status.Line). The init finds the descriptor's number in
// the environment variable Env, the only variable it is given.

// Env marks a process started as the sandbox's init (value
// "init:<fd>") or as the holder of a user namespace used for an idmapped
// mount ("hold").
const Env = "LCP_SANDBOX_INIT"

// Config is everything the init needs, in the sandbox's own paths.
type Config struct {
	// The command: program, arguments, working directory, environment.
	Path string
	Args []string
	Dir  string
	Env  []string
	// Passthrough is the number of descriptors after stdin, stdout and
	// stderr (3, 4, ...) that the command inherits.
	Passthrough int
	// Status is the descriptor of the status pipe.
	Status int
	// Mounts build the sandbox's root, in order.
	Mounts []Mount
	// Network keeps the host's network namespace; otherwise the init
	// brings the loopback interface of its own up.
	Network bool
	// Limits are applied to the command, not to the init.
	Limits Limits
	// Gate, when set, is a descriptor the init reads one byte from before
	// it starts the command: lcp writes it once the init is in the run's
	// control groups, and closes it without writing when it is not.
	Gate int
	// PidsGroup: a pids control group counts the run's processes, and
	// RLIMIT_NPROC is set above it (the group's count is the one read).
	PidsGroup bool
	// Egress, when set, has the init listen on the loopback for the
	// proxy and hand connections over (see Policy.Egress).
	Egress *Egress
	// Seccomp installs the filter of seccomp_linux.go before the command
	// starts.
	Seccomp bool
	// Layer, when set, asks the init to keep the workspace's
	// copy-on-write layer in a tmpfs of its own (a non-root lcp, which
	// cannot make one itself) and to send lcp the mount's descriptor.
	Layer *Layer
	// Landlock rules, in sandbox paths.
	ReadOnly  []string
	ReadWrite []string
}

// MountKind says what a Mount mounts.
type MountKind string

const (
	MountBind    MountKind = "bind"    // Src (fd or host path) at Dst
	MountTmpfs   MountKind = "tmpfs"   // an empty tmpfs of Size bytes, mode Mode
	MountProc    MountKind = "proc"    // the sandbox's /proc
	MountDev     MountKind = "dev"     // a minimal /dev
	MountOverlay MountKind = "overlay" // Src as lower layer, Upper (fd or path) or a scratch upper
	MountSymlink MountKind = "symlink" // a symbolic link to Target
	MountRebind  MountKind = "rebind"  // Dst (already in the sandbox) again, read-only
)

// Mount is one step of the mount plan.
type Mount struct {
	Kind MountKind
	Dst  string
	// Src is the source: a host path (resolved by the init, when lcp is
	// not root) or, with Fd >= 0, a detached mount lcp cloned for it.
	Src string
	Fd  int
	// File: the source is a file, not a directory.
	File bool
	// ReadOnly makes a bind read-only (lcp sets it itself on detached
	// mounts).
	ReadOnly bool
	// Optional entries are skipped when their source is missing.
	Optional bool
	// Size and Mode of a tmpfs.
	Size int64
	Mode uint32
	// Target of a symbolic link.
	Target string
	// Upper of an overlay: a host directory (or, with UpperFd >= 0, a
	// detached mount of it) holding "upper" and "work"; empty for a
	// throwaway upper in the init's scratch tmpfs.
	Upper   string
	UpperFd int
	// Fallback of an overlay whose mount fails: a read-only bind instead
	// (caches), or a set-up failure when false (the workspace).
	Fallback bool
}

// Layer is the tmpfs the init makes for the workspace's copy-on-write
// layer: its size is the run's disk budget, so a full layer is the
// budget reached. The init sends the mount's descriptor on Sock
// (SCM_RIGHTS, one byte of data) once the overlay is mounted on it, and
// closes Sock in any case before the command starts; without the
// descriptor lcp knows the layer stayed in the host folder (Upper).
type Layer struct {
	Size   int64
	Inodes int64
	Sock   int
	// Refuse makes the tmpfs's probe fail (a test knob: the fallback).
	Refuse bool
}

// Status is one line the init writes on the status pipe.
type Status struct {
	// Type is "ready" (the command started), "error" (set-up failed,
	// the command did not run), "warn" (a degraded step) or "exit".
	Type string
	Step string
	Err  string
	// Exit status of the command: code, or the signal that killed it.
	Code   int
	Signal string
	// PeakProcs is the most processes seen at once in the sandbox.
	PeakProcs int
	// MaxRSS is the largest resident size of any process of the run, in
	// bytes.
	MaxRSS int64
}

// Egress is where the init listens for the egress proxy, and the
// descriptor of the socket it hands connections over on.
type Egress struct {
	Port int
	Fd   int
}
