package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcptools/lcp/sandbox/internal/sbinit"
)

// budgetPoll is how often lcp reads the kernel's counters of a running
// run: going over a budget ends the run within about this long.
const budgetPoll = 100 * time.Millisecond

// budget watches the budget of one run from the host.
type budget struct {
	cmd    *exec.Cmd
	limits Limits
	group  *runGroup // nil: no control groups (the rlimits bound the run)
	gateW  *os.File  // the init starts the command once lcp writes a byte here
	layer  *os.File  // the size-capped tmpfs of the copy-on-write layer, or nil
	// wantLayer: a copy-on-write run with a disk budget, which has a
	// total only when its layer is a tmpfs (layer set).
	wantLayer bool
	// layerSock is lcp's end of the socket a non-root lcp's init sends
	// the layer's tmpfs on (askLayerFS); layerIn is closed once it came
	// or will not come, and layer and layerRoot are set then.
	layerSock *os.File
	layerIn   chan struct{}
	layerRoot string
	layerErr  error // the init sent something lcp could not take
	// writes is set for a Write run with a disk budget: the bytes its
	// processes write are counted (diskwrites_linux.go), from base on
	// (the count when the current unit of work began: BeginUnit).
	writes bool
	unitMu sync.Mutex // BeginUnit and the readings of unitWrites, in turn
	base   int64

	mu       sync.Mutex
	exceeded string
	placeErr error
	stop     chan struct{}
	stopOnce sync.Once
	watching sync.WaitGroup // the watch, which reads the layer
}

// accounting names what bounds the run's totals.
func (g *budget) accounting() string {
	if g.group != nil {
		return "cgroup v" + strconv.Itoa(g.group.version)
	}
	return "rlimits" + leafNote()
}

// prepareBudget makes the run's control groups and the gate the init
// waits at, before the Box's configuration is written. Failing to limit
// a hierarchy that is there is an error: nothing runs unconfined.
func (b *Box) prepareBudget(cmd *exec.Cmd) error {
	l := b.policy.Limits
	g := &budget{cmd: cmd, limits: l, stop: make(chan struct{})}
	b.budget = g
	if b.policy.Mode == Write && l.Disk > 0 && ioAccounting() {
		g.writes = true
	}
	if l.TotalMemory > 0 || l.Processes > 0 {
		group, err := newRunGroup(l)
		if err != nil {
			return err
		}
		g.group = group
	}
	if g.group != nil {
		r, w, err := os.Pipe()
		if err != nil {
			g.group.remove()
			return err
		}
		b.gateR, g.gateW = r, w
	}
	b.onStarted, b.onEnded, b.onClose = g.started, g.ended, func() { g.close(b.drained) }
	return nil
}

// started puts the init in its groups and lets it go on (it has built the
// sandbox meanwhile), then watches the counters while the run lasts.
func (g *budget) started() {
	// g.layer is the receive's to set from now on.
	watch := g.group != nil || g.layer != nil || g.writes || g.layerIn != nil
	g.startReceive()
	p := g.cmd.Process
	if g.gateW != nil {
		if p != nil {
			if err := g.group.place(p.Pid); err != nil {
				g.mu.Lock()
				g.placeErr = err
				g.mu.Unlock()
			} else {
				_, _ = g.gateW.Write([]byte{1})
			}
		}
		g.gateW.Close() // without the byte, the init does not run the command
	}
	if p == nil {
		return
	}
	if g.limits.WallTime > 0 {
		t := time.AfterFunc(g.limits.WallTime, func() { g.over(BudgetTime) })
		go func() { <-g.stop; t.Stop() }()
	}
	if watch {
		g.watching.Go(g.watch)
	}
}

// startReceive has the init's layer received in the background, once the
// init has started (or its end is closed: the receive ends at once).
func (g *budget) startReceive() {
	if g.layerIn == nil {
		return
	}
	if g.cmd.Process == nil {
		g.layerSock.Close()
		close(g.layerIn)
		return
	}
	go g.receiveLayer()
}

// receiveLayer waits for the descriptor of the layer's tmpfs, which the
// init sends before it starts the command, or for the init's end of the
// socket to close without it (the layer stayed in the host folder).
func (g *budget) receiveLayer() {
	defer close(g.layerIn)
	defer g.layerSock.Close()
	fd, err := recvFd(g.layerSock)
	if err != nil || fd < 0 {
		g.layerErr = err
		return
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		unix.Close(fd)
		g.layerErr = fmt.Errorf("the init sent a layer that is not a tmpfs (%v)", err)
		return
	}
	g.layer = os.NewFile(uintptr(fd), "lcp-sandbox-layer")
	g.layerRoot = fmt.Sprintf("/proc/self/fd/%d", fd)
}

// recvFd reads one byte and the one descriptor that comes with it from
// f; it returns -1 and no error when the other end closed without one.
func recvFd(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*4))
	var n, oobn, flags int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, oobn, flags, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	}); err != nil {
		return -1, err
	}
	if rerr != nil {
		return -1, rerr
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for i := range msgs {
			if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	switch {
	case n == 0 && len(fds) == 0:
		return -1, nil
	case len(fds) != 1 || flags&unix.MSG_CTRUNC != 0:
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("the init sent %d descriptors for the layer, not one", len(fds))
	}
	return fds[0], nil
}

// receivedLayer returns the root of the layer's tmpfs the init sent, ""
// when it sent none (or the run has not started); it waits until the
// init has sent it or closed its end.
func (b *Box) receivedLayer() (string, error) {
	g := b.budget
	if g == nil || g.layerIn == nil {
		return "", nil
	}
	b.mu.Lock()
	started := b.started
	b.mu.Unlock()
	if !started {
		return "", nil
	}
	<-g.layerIn
	return g.layerRoot, g.layerErr
}

// watch reads the counters until the run ends.
func (g *budget) watch() {
	if g.layerIn != nil {
		select {
		case <-g.layerIn:
		case <-g.stop:
			return
		}
		if g.group == nil && g.layer == nil && !g.writes {
			return
		}
	}
	t := time.NewTicker(budgetPoll)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		if what := g.check(); what != "" {
			g.over(what)
			return
		}
	}
}

// check says which budget the kernel's counters show went over.
func (g *budget) check() string {
	if g.group != nil {
		u := g.group.read()
		switch {
		case u.oomKills > 0:
			return BudgetMemory
		case u.pidsDenied > 0:
			return BudgetProcesses
		}
	}
	if g.layer != nil && layerFull(g.layer) {
		return BudgetDisk
	}
	if g.writes && g.cmd.Process != nil && g.unitWrites(g.cmd.Process.Pid) > g.limits.Disk {
		return BudgetDisk
	}
	return ""
}

// unitWrites is what the run has written since its current unit of work
// began (since it started, when it has none).
func (g *budget) unitWrites(init int) int64 {
	g.unitMu.Lock()
	defer g.unitMu.Unlock()
	return g.runWrites(init) - g.base
}

// BeginUnit begins a unit of work of a long-lived Write run, a library
// worker's call: from now on the disk budget bounds what the run writes
// since this moment, not since it started, so that calls that each stay
// within the budget never add up to more. The writes of calls in flight
// together count for the newest one. It does nothing for other runs.
func (b *Box) BeginUnit() {
	g := b.budget
	if g == nil || !g.writes || g.cmd.Process == nil {
		return
	}
	g.unitMu.Lock()
	defer g.unitMu.Unlock()
	g.base = g.runWrites(g.cmd.Process.Pid)
}

// EndUnit ends a unit of work begun with BeginUnit: when the run has
// written more than its disk budget since then (a writer faster than the
// budget's watch) it ends the run at BudgetDisk, as the watch would have,
// and returns an error that names the budget; it also does when the run
// had already gone over a budget. Nil otherwise, and for other runs.
func (b *Box) EndUnit() error {
	g := b.budget
	if g == nil || !g.writes || g.cmd.Process == nil {
		return nil
	}
	if g.exceededNow() == "" && g.unitWrites(g.cmd.Process.Pid) > g.limits.Disk {
		g.over(BudgetDisk)
	}
	what := g.exceededNow()
	if what == "" {
		return nil
	}
	r := &Report{Limits: g.limits, Mode: Write, Exceeded: what}
	return fmt.Errorf("sandbox: the run went over %s and was ended", r.BudgetText())
}

// layerFull reports whether the copy-on-write layer's filesystem is full
// (a write there failed with ENOSPC, or is about to).
func layerFull(f *os.File) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &st) != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) < 1<<20 || st.Files > 0 && st.Ffree == 0
}

// over records the first budget the run went over and ends the run.
func (g *budget) over(what string) {
	g.mu.Lock()
	first := g.exceeded == ""
	if first {
		g.exceeded = what
	}
	g.mu.Unlock()
	if first && g.cmd.Process != nil {
		_ = g.cmd.Process.Signal(os.Kill)
	}
}

// ended fills in the report once the run has ended: the budget it went
// over (the counters are read a last time), its peak memory.
func (g *budget) ended(r *Report) {
	g.stopOnce.Do(func() { close(g.stop) })
	if g.layerIn != nil {
		<-g.layerIn
	}
	r.Accounting = g.accounting()
	if g.wantLayer && g.layer == nil {
		r.Accounting += "; " + NoDiskTotal
	}
	if g.group != nil {
		r.PeakMemory = g.group.read().peakMemory
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.exceeded == "" {
		g.exceeded = g.check()
	}
	r.Exceeded = g.exceeded
	var se *SetupError
	if g.placeErr != nil && errors.As(r.SetupErr, &se) && se.Step == "budget" {
		r.SetupErr = &SetupError{Step: "budget", Err: fmt.Errorf("%w; the command did not start", g.placeErr)}
	}
}

// close removes the run's groups and releases its layer once the init
// has exited (drained is closed then): a worker's Box is closed while its
// run goes on, under its budget.
func (g *budget) close(drained <-chan struct{}) {
	select {
	case <-drained:
		g.teardown()
	default:
		go func() {
			<-drained
			g.teardown()
		}()
	}
}

func (g *budget) teardown() {
	g.stopOnce.Do(func() { close(g.stop) })
	g.watching.Wait()
	if g.layerIn != nil {
		<-g.layerIn
	}
	if g.gateW != nil {
		g.gateW.Close()
	}
	g.group.remove()
	if g.layer != nil {
		g.layer.Close()
	}
}

// makeLayerFS gives the run's copy-on-write layer a filesystem of its
// own, a tmpfs of the disk budget's size (lcp is root: it can make one
// without a mount point, which disappears with the last descriptor, a
// crash included). The tmpfs must keep user extended attributes (overlay
// needs them in a user namespace; Linux 6.6 and later); ok is false when
// it cannot be made, and the layer stays in the temporary folder.
func (b *Box) makeLayerFS() (ok bool) {
	l := b.policy.Limits
	if !b.id.root || l.Disk <= 0 {
		return false
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return false
	}
	defer unix.Close(fsfd)
	for _, kv := range [][2]string{{"size", strconv.FormatInt(l.Disk, 10)}, {"nr_inodes", strconv.FormatInt(layerInodes(l.Disk), 10)},
		{"mode", "0700"}, {"uid", strconv.Itoa(b.id.hostUID)}, {"gid", strconv.Itoa(b.id.hostGID)}} {
		if unix.FsconfigSetString(fsfd, kv[0], kv[1]) != nil {
			return false
		}
	}
	if unix.FsconfigCreate(fsfd) != nil {
		return false
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(mfd), "lcp-sandbox-layer")
	root := fmt.Sprintf("/proc/self/fd/%d", mfd)
	for _, d := range []string{"upper", "work"} {
		p := filepath.Join(root, d)
		if os.Mkdir(p, 0o700) != nil || os.Lchown(p, b.id.hostUID, b.id.hostGID) != nil {
			f.Close()
			return false
		}
	}
	if unix.Lsetxattr(filepath.Join(root, "work"), "user.lcp.probe", []byte("1"), 0) != nil {
		f.Close()
		return false
	}
	_ = unix.Lremovexattr(filepath.Join(root, "work"), "user.lcp.probe")
	b.budget.layer = f
	b.layerRoot = root
	return true
}

// layerInodes is the number of inodes of a layer of disk bytes: one per
// 4 KiB, at least 1024, so that a flood of empty files fills it too.
func layerInodes(disk int64) int64 {
	return max(disk/4096, 1024)
}

// layerTmpfsOff makes the init's layer probe fail (tests of the
// fallback).
var layerTmpfsOff atomic.Bool

// askLayerFS asks the init of a non-root lcp's copy-on-write run to make
// the layer's tmpfs (lcp cannot: it is not root on the host) and to send
// it back on a socket whose other end the init inherits (b.layerChild).
func (b *Box) askLayerFS() error {
	g := b.budget
	if b.id.root || b.policy.Limits.Disk <= 0 {
		return nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("layer socket: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return fmt.Errorf("layer socket: %w", err)
	}
	g.layerSock = os.NewFile(uintptr(fds[0]), "lcp-sandbox-layer-socket")
	g.layerIn = make(chan struct{})
	b.layerChild = os.NewFile(uintptr(fds[1]), "lcp-sandbox-layer-socket")
	return nil
}

// layerConfig is what the init needs to make the layer's tmpfs, with
// its end of the socket at descriptor fd.
func (b *Box) layerConfig(fd int) *sbinit.Layer {
	d := b.policy.Limits.Disk
	return &sbinit.Layer{Size: d, Inodes: layerInodes(d), Sock: fd, Refuse: layerTmpfsOff.Load()}
}

// layerHandOver returns a descriptor of the layer's mount for the init,
// which attaches it: the host keeps its own, to read the changes after
// the run.
func (b *Box) layerHandOver() (*os.File, error) {
	fd, err := unix.FcntlInt(b.budget.layer.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "lcp-sandbox-layer"), nil
}

// exceededNow is the budget the run has gone over so far ("" for none).
func (g *budget) exceededNow() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exceeded
}
