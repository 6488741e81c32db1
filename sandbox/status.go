package sandbox

import (
	"os"
	"strings"
	"sync"
)

// Status is what this machine allows the sandbox, for `lcp doctor` and
// for deciding how safe mode behaves.
type Status struct {
	// Available is true when sandboxed runs work here; Reason says why
	// not otherwise.
	Available bool
	Reason    string
	// Forced is true when the sandbox was switched off on purpose
	// (LCP_SANDBOX=off, ForceOff) rather than refused by the system.
	Forced bool
	Kernel string
	// Root: lcp runs as root (it then clones mounts itself, shows a
	// root-owned workspace through an idmapped mount, and runs the
	// sandbox as an unprivileged user).
	Root bool
	// UserNamespaces: the kernel lets lcp create user namespaces (and
	// with them mount, PID, network, IPC and UTS namespaces);
	// UserNamespacesWhy says why not.
	UserNamespaces    bool
	UserNamespacesWhy string
	// Overlay: overlayfs mounts inside a user namespace (the
	// copy-on-write workspace).
	Overlay bool
	// IdmappedMounts: lcp may create idmapped mounts (as root, on
	// filesystems that support them).
	IdmappedMounts bool
	// LandlockABI is the kernel's Landlock ABI version, 0 without it.
	LandlockABI int
	// Cgroups describes the cgroup layout; PidsController where the pids
	// controller is (informational: lcp bounds processes with
	// RLIMIT_NPROC in each run's own user namespace).
	Cgroups        string
	PidsController string
	// ProcessLimit: RLIMIT_NPROC is enforced in sandboxed runs (the
	// sandbox never runs as host uid 0).
	ProcessLimit bool
	// Seccomp says whether runs get the seccomp filter, for which
	// architecture, or why not.
	Seccomp string
	// DiskTotal: a copy-on-write run's layer is a tmpfs of the disk
	// budget's size (made by lcp as root, by the sandbox's init
	// otherwise), so the budget bounds its new and changed files
	// together; false when the layer stays in the temporary folder.
	DiskTotal bool
}

var (
	forceMu     sync.Mutex
	forceReason string
)

// ForceOff switches the sandbox off for this process, as LCP_SANDBOX=off
// does, so that the behaviour of machines without it can be tested here.
// It returns a function that restores the previous state.
func ForceOff(reason string) (restore func()) {
	forceMu.Lock()
	prev := forceReason
	forceReason = reason
	forceMu.Unlock()
	return func() {
		forceMu.Lock()
		forceReason = prev
		forceMu.Unlock()
	}
}

// forcedOff returns why the sandbox is switched off, "" when it is not.
func forcedOff() string {
	forceMu.Lock()
	r := forceReason
	forceMu.Unlock()
	if r != "" {
		return r
	}
	switch strings.ToLower(os.Getenv("LCP_SANDBOX")) {
	case "off", "0", "false", "no":
		return "switched off by LCP_SANDBOX=" + os.Getenv("LCP_SANDBOX")
	}
	return ""
}
