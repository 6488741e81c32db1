package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcptools/lcp/sandbox/internal/sbinit"
)

// nobody is the host user and group a root lcp runs a sandbox as when the
// workspace belongs to root: the kernel does not enforce RLIMIT_NPROC for
// uid 0, and uid 0 owns files of the system that no command should read.
const nobody = 65534

func chooseIdentity(ws string) (identity, error) {
	var st unix.Stat_t
	if err := unix.Stat(ws, &st); err != nil {
		return identity{}, fmt.Errorf("workspace: %w", err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	id := identity{ownUID: int(st.Uid), ownGID: int(st.Gid)}
	if uid != 0 {
		// Only one id can be mapped without privileges: lcp's own.
		id.inUID, id.inGID, id.hostUID, id.hostGID = uid, gid, uid, gid
		return id, nil
	}
	id.root = true
	id.inUID, id.inGID = id.ownUID, id.ownGID
	id.hostUID, id.hostGID = id.ownUID, id.ownGID
	if id.hostUID == 0 {
		id.hostUID = nobody
	}
	if id.hostGID == 0 {
		id.hostGID = nobody
	}
	id.idmap = id.hostUID != id.ownUID || id.hostGID != id.ownGID
	return id, nil
}

// Wrap prepares cmd to run inside the sandbox p describes: starting cmd
// (cmd.Start, or a spawner that keeps the parent-death signal) then
// starts the sandbox's init, which builds the sandbox and runs the
// original program with the original arguments, environment and working
// directory — p.Env replaces cmd.Env, and cmd.Dir must be inside the
// workspace. cmd.Stdin, Stdout, Stderr and ExtraFiles reach the program;
// cmd.SysProcAttr is kept and extended.
//
// The caller calls Box.Started once cmd started (or failed to), reads
// Box.Report after cmd.Wait, and calls Box.Close when done. Any failure
// to prepare is an error: nothing runs unsandboxed.
func Wrap(cmd *exec.Cmd, p *Policy) (*Box, error) {
	if st := Probe(); !st.Available {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, st.Reason)
	}
	if !mainCalled.Load() && !sbinit.OptedIn() {
		return nil, ErrNoMain
	}
	return wrap(cmd, p)
}

func wrap(cmd *exec.Cmd, p *Policy) (b *Box, err error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	pol, err := checkPolicy(p)
	if err != nil {
		return nil, err
	}
	id, err := chooseIdentity(pol.Workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	box := &Box{policy: pol, id: id, start: time.Now(), ended: make(chan struct{}), drained: make(chan struct{})}
	b = box
	defer func() {
		if err != nil {
			// Every return has set b to nil by now: close what was made.
			box.Close()
			b = nil
		}
	}()
	if err := b.prepareBudget(cmd); err != nil {
		return nil, fmt.Errorf("sandbox: budget: %w", err)
	}
	if pol.Mode == CopyOnWrite {
		if err := b.makeLayers(); err != nil {
			return nil, fmt.Errorf("sandbox: copy-on-write layers: %w", err)
		}
		b.budget.wantLayer = pol.Limits.Disk > 0
		if !b.makeLayerFS() {
			if err := b.askLayerFS(); err != nil {
				return nil, fmt.Errorf("sandbox: copy-on-write layers: %w", err)
			}
		}
	}
	dir := cmd.Dir
	if dir == "" {
		dir = pol.Workspace
	}
	cfg := &initConfig{Path: cmd.Path, Args: cmd.Args, Dir: dir, Env: append(slices.Clip(pol.Env), pol.GivenEnv...),
		Passthrough: len(cmd.ExtraFiles), Network: pol.Network, Limits: initLimits(pol.Limits), PidsGroup: b.budget.group != nil,
		Seccomp: !pol.NoSeccomp && sbinit.SeccompWanted()}
	if pol.Egress != nil {
		cfg.Egress = &egressConfig{Port: pol.EgressPort}
		cfg.Env = proxyEnv(cfg.Env, pol.EgressPort)
	}
	if len(cfg.Args) == 0 {
		cfg.Args = []string{cmd.Path}
	}
	plan, err := b.plan()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cfgFd, err := b.handOver(cfg, plan)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{"lcp-sandbox"}
	// GOTRACEBACK=none: a fatal error of the init's runtime prints its
	// message without a stack trace (the command gets cfg.Env, not this).
	cmd.Env = []string{fmt.Sprintf("%s=init:%d", initEnv, cfgFd), "GOTRACEBACK=none"}
	// The init reaches its directory only once it has built its root.
	cmd.Dir = "/"
	cmd.ExtraFiles = append(slices.Clip(cmd.ExtraFiles), b.childFiles...)
	cmd.SysProcAttr = b.procAttr(cmd.SysProcAttr)
	return b, nil
}

// checkPolicy validates a policy and fills in its defaults.
func checkPolicy(p *Policy) (Policy, error) {
	if p == nil || p.Workspace == "" {
		return Policy{}, errors.New("sandbox: the policy names no workspace")
	}
	pol := *p
	pol.Limits = pol.Limits.WithDefaults()
	if pol.Mode == 0 {
		pol.Mode = ReadOnly
	}
	var err error
	if pol.Workspace, err = filepath.Abs(pol.Workspace); err != nil {
		return Policy{}, fmt.Errorf("sandbox: workspace: %w", err)
	}
	if pol.Egress != nil && pol.Network {
		return Policy{}, errors.New("sandbox: a run with the host's network has no egress proxy")
	}
	if pol.EgressPort == 0 {
		pol.EgressPort = DefaultEgressPort
	}
	if pol.EgressPort < 1 || pol.EgressPort > 65535 {
		return Policy{}, fmt.Errorf("sandbox: egress port %d is not a port", pol.EgressPort)
	}
	if pol.Workspace == "/" {
		return Policy{}, errors.New("sandbox: the workspace cannot be the root folder")
	}
	// Through a link, what the sandbox protects in the workspace (git
	// folders, hooks) would be looked up in the wrong place.
	if real, err := filepath.EvalSymlinks(pol.Workspace); err != nil {
		return Policy{}, fmt.Errorf("sandbox: workspace: %w", err)
	} else if real != pol.Workspace {
		return Policy{}, fmt.Errorf("sandbox: the workspace %s is reached through a symbolic link; name its real path %s", pol.Workspace, real)
	}
	for _, kv := range pol.Env {
		if k, _, _ := strings.Cut(kv, "="); IsSecretName(k) {
			return Policy{}, fmt.Errorf("sandbox: the environment names %s, which looks like a secret", k)
		}
	}
	return pol, nil
}

// handOver lays out what the init inherits after the passed-through
// descriptors — the configuration, the status pipe, then the detached
// mounts — writes the configuration, and returns its descriptor number in
// the init. Everything it opens is the Box's to release.
func (b *Box) handOver(cfg *initConfig, plan *mountPlan) (int, error) {
	next := 3 + cfg.Passthrough
	for i := range plan.mounts {
		m := &plan.mounts[i]
		if m.file != nil {
			b.childFiles = append(b.childFiles, m.file)
		}
		if m.upper != nil {
			b.childFiles = append(b.childFiles, m.upper)
		}
	}
	cfgFile, err := memfile("lcp-sandbox-config")
	if err != nil {
		return 0, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		cfgFile.Close()
		return 0, err
	}
	b.statusR = statusR
	mounts := b.childFiles
	b.childFiles = append([]*os.File{cfgFile, statusW}, mounts...)
	cfgFd, fd := next, next+2
	cfg.Status = next + 1
	if cfg.Egress != nil {
		ours, theirs, err := egressPair()
		if err != nil {
			return 0, err
		}
		b.egressR = ours
		b.childFiles = append(b.childFiles[:2:2], append([]*os.File{theirs}, mounts...)...)
		cfg.Egress.Fd, fd = next+2, next+3
	}
	for i := range plan.mounts {
		m := &plan.mounts[i]
		if m.file != nil {
			m.Fd, fd = fd, fd+1
		}
		if m.upper != nil {
			m.UpperFd, fd = fd, fd+1
		}
		cfg.Mounts = append(cfg.Mounts, m.mountEntry)
	}
	if b.gateR != nil {
		b.childFiles = append(b.childFiles, b.gateR)
		cfg.Gate, b.gateR = fd, nil
		fd++
	}
	if b.layerChild != nil {
		b.childFiles = append(b.childFiles, b.layerChild)
		cfg.Layer, b.layerChild = b.layerConfig(fd), nil
	}
	cfg.ReadOnly, cfg.ReadWrite = plan.readOnly, plan.readWrite
	if _, err := cfgFile.Write(cfg.Encode()); err != nil {
		return 0, err
	}
	return cfgFd, nil
}

// procAttr extends the caller's process attributes with the namespaces
// and the identity of the sandbox.
func (b *Box) procAttr(orig *syscall.SysProcAttr) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{}
	if orig != nil {
		*a = *orig
	}
	a.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP
	if !b.policy.Network {
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	id := b.id
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: id.inUID, HostID: id.hostUID, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: id.inGID, HostID: id.hostGID, Size: 1}}
	if id.root {
		// Clear the supplementary groups: root's would keep group 0.
		a.Credential = &syscall.Credential{Uid: uint32(id.inUID), Gid: uint32(id.inGID), Groups: []uint32{}}
		a.GidMappingsEnableSetgroups = true
	} else {
		a.Credential = nil
		a.GidMappingsEnableSetgroups = false
	}
	if id.inUID != 0 {
		// A process that is not root in its namespace loses its
		// capabilities at execve: keep those the init needs to build
		// the sandbox (it drops them all before the command runs).
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN,
			unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_SYS_CHROOT}
	}
	return a
}

// makeLayers creates the run's private folder with the copy-on-write
// upper and work layers, owned by the sandbox's host user.
func (b *Box) makeLayers() error {
	dir, err := os.MkdirTemp("", "lcp-sandbox-")
	if err != nil {
		return err
	}
	b.tmp = dir
	if err := writeLayerOwner(dir); err != nil {
		return err
	}
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	if b.id.root {
		for _, d := range []string{"", "upper", "work"} {
			if err := os.Lchown(filepath.Join(dir, d), b.id.hostUID, b.id.hostGID); err != nil {
				return err
			}
		}
	}
	return nil
}

// memfile returns an anonymous in-memory file for the configuration.
func memfile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}
