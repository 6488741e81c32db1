package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lcptools/lcp/sandbox/internal/sbinit"
)

// Box is one sandboxed run, prepared by Wrap.
type Box struct {
	policy Policy
	id     identity
	tmp    string // the run's private folder (copy-on-write layers); "" if none
	start  time.Time

	statusR    *os.File
	egressR    *os.File   // lcp's end of the socket the init hands connections over on
	childFiles []*os.File // the child's ends and detached mounts; closed by Started

	// The budget's hooks (see budget_linux.go): placing the started
	// init in its control groups, what the kernel counted, clean-up.
	budget     *budget
	gateR      *os.File // the init's end of the budget's gate
	layerRoot  string   // the copy-on-write layer's own filesystem, when lcp made one
	layerChild *os.File // the init's end of the socket it sends its layer on
	onStarted  func()
	onEnded    func(*Report)
	onClose    func()

	// knownGitDirs are the git dirs a Write run found at plan time
	// (nil when it did not look): those it creates are neutralised
	// once it has ended (newrepos.go).
	knownGitDirs map[string]bool
	newReposDone bool
	// keptReadOnly describes what a Write run's mounts keep read-only
	// (KeptReadOnly's lines), for confirmations.
	keptReadOnly []string

	mu      sync.Mutex
	started bool
	closed  bool
	report  *Report
	ended   chan struct{} // closed once the init said how the command ended, or died
	drained chan struct{} // closed once the status pipe is read to its end
}

// Report says how a sandboxed run went, from the sandbox's init.
type Report struct {
	// SetupErr (a *SetupError) is set when the sandbox could not be set
	// up: the command did not run.
	SetupErr error
	// Warnings are degraded steps (a cache shown read-only because its
	// throwaway layer failed, ...).
	Warnings []string
	// Exited is true when the init saw the command end (false when the
	// whole sandbox was killed: time limit, cancellation).
	Exited bool
	// Code is the command's exit code, or 128+N when signal N killed it;
	// Signal names that signal.
	Code   int
	Signal string
	// PeakProcesses is the most processes seen at once.
	PeakProcesses int
	// MaxRSS is the largest resident size any process of the run
	// reached, in bytes (0 when the run was killed).
	MaxRSS int64
	// Limits are the limits the run had.
	Limits Limits
	// Mode is how the run showed the workspace (what Disk counted).
	Mode Mode
	// Exceeded names the budget the run went over, which ended it:
	// BudgetMemory, BudgetDisk, BudgetProcesses or BudgetTime; "" when
	// none.
	Exceeded string
	// PeakMemory is the most memory the whole run had at once, in bytes,
	// as the kernel counted it (0 without a memory control group).
	PeakMemory int64
	// Accounting says what bounded the run's totals: "cgroup v1",
	// "cgroup v2", or "rlimits" (per process limits and tmpfs sizes
	// only), followed by " (cgroup v2 leaf group not used: why)" when
	// UseLeafGroup was called and refused; a copy-on-write run whose layer had no size of its own
	// (the layer stayed in the temporary folder) adds "; no disk total"
	// (NoDiskTotal).
	Accounting string
	// NewRepos says, one line each, what lcp disabled in the
	// repositories a Write run created, so that nothing the run planted
	// there runs at the user's next git command ("new repository x:
	// hooks disabled: pre-commit (moved to x/.git/hooks.lcp-disabled)").
	NewRepos []string
}

// The budgets a run can go over (Report.Exceeded).
const (
	BudgetMemory    = "memory"
	BudgetDisk      = "disk"
	BudgetProcesses = "processes"
	BudgetTime      = "time"
)

// NoDiskTotal ends Report.Accounting (and Accounting) when a
// copy-on-write run's layer has no size of its own: the layer stayed in
// the temporary folder, each file capped but not their total.
const NoDiskTotal = "no disk total"

// BudgetText says which budget a run went over and how large it was, for
// a result: "the memory budget (512 MiB for the whole run)". It returns
// "" when r went over none.
func (r *Report) BudgetText() string {
	l := r.Limits
	switch r.Exceeded {
	case BudgetMemory:
		return fmt.Sprintf("the memory budget (%s for the whole run)", sizeText(l.TotalMemory))
	case BudgetDisk:
		if r.Mode == Write {
			return fmt.Sprintf("the disk budget (%s written to the workspace)", sizeText(l.Disk))
		}
		return fmt.Sprintf("the disk budget (%s of new and changed files)", sizeText(l.Disk))
	case BudgetProcesses:
		return fmt.Sprintf("the process budget (%d processes and threads at once)", l.Processes)
	case BudgetTime:
		return fmt.Sprintf("the time budget (%s)", l.WallTime)
	}
	return ""
}

// sizeText writes a size in MiB or GiB.
func sizeText(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// Upper returns the copy-on-write upper layer of the run, "" when the
// workspace is not copy-on-write. Call it once the command ended: for a
// non-root lcp, it waits until the init has sent the layer's tmpfs or
// has gone on without one.
func (b *Box) Upper() string {
	if b.tmp == "" {
		return ""
	}
	if b.layerRoot != "" {
		return filepath.Join(b.layerRoot, "upper")
	}
	if root, _ := b.receivedLayer(); root != "" {
		return filepath.Join(root, "upper")
	}
	return filepath.Join(b.tmp, "upper")
}

// KeptReadOnly describes, one line each ("sub/.git: the git dir of …",
// relative to the workspace), what the run's mounts keep read-only in
// its workspace: the version control folders and what git runs or loads
// from them, as they were when Wrap planned a Write run (a repository
// the run creates later is not in it; see docs/sandbox.md). Nil for
// other modes and when the policy made version control writable.
func (b *Box) KeptReadOnly() []string { return b.keptReadOnly }

// Policy returns the policy the run has (limits with their defaults).
func (b *Box) Policy() Policy { return b.policy }

// Began returns when the run was prepared: a file of the workspace whose
// status changed after it was changed by someone else.
func (b *Box) Began() time.Time { return b.start }

// Started releases what only the starting child needed (its ends of the
// pipes, the configuration, the detached mounts) and starts reading what
// the init reports. Call it once the command has started or failed to.
func (b *Box) Started() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked()
}

func (b *Box) releaseLocked() {
	if b.started {
		return
	}
	b.started = true
	if b.onStarted != nil {
		b.onStarted()
	}
	for _, f := range b.childFiles {
		f.Close()
	}
	b.childFiles = nil
	r := &Report{Limits: b.policy.Limits, Mode: b.policy.Mode}
	b.report = r
	if b.egressR != nil {
		b.serveEgress(b.egressR)
		b.egressR = nil
	}
	if b.statusR == nil {
		close(b.ended)
		close(b.drained)
		return
	}
	go b.readStatus(b.statusR, r)
}

// readStatus reads the init's status lines: the run has ended at the
// "exit" (or "error") line, before the init has torn its namespaces down.
func (b *Box) readStatus(f *os.File, r *Report) {
	defer close(b.drained)
	endOnce := sync.OnceFunc(func() { close(b.ended) })
	defer endOnce()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		m, err := sbinit.ParseStatus(sc.Text())
		if err != nil {
			continue
		}
		b.mu.Lock()
		switch m.Type {
		case "error":
			r.SetupErr = &SetupError{Step: m.Step, Err: errors.New(m.Err)}
		case "warn":
			r.Warnings = append(r.Warnings, m.Step+": "+m.Err)
		case "exit":
			r.Exited, r.Code, r.Signal, r.PeakProcesses, r.MaxRSS = true, m.Code, m.Signal, m.PeakProcs, m.MaxRSS
		}
		b.mu.Unlock()
		if m.Type == "exit" || m.Type == "error" {
			endOnce()
		}
	}
}

// Ended returns a channel closed once the command has ended (the init
// said how) or the sandbox died: the command's output is complete then,
// while the init may still be tearing its namespaces down.
func (b *Box) Ended() <-chan struct{} { return b.ended }

// Exit tells how the command ended, once Ended is closed: its exit code,
// or 128+N and the name of signal N; ok is false when the init did not
// say (the sandbox was killed, or its set-up failed).
func (b *Box) Exit() (code int, signal string, ok bool) {
	<-b.ended
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.report
	if r == nil || !r.Exited {
		return 0, "", false
	}
	return r.Code, r.Signal, true
}

// Report returns how the run went. Call it after the command's Wait, or
// once Ended is closed.
func (b *Box) Report() *Report {
	b.mu.Lock()
	b.releaseLocked()
	b.mu.Unlock()
	<-b.ended
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.knownGitDirs != nil && !b.newReposDone && b.report != nil {
		b.newReposDone = true
		lines, err := neutraliseNewRepos(b.policy.Workspace, b.knownGitDirs)
		b.report.NewRepos = lines
		if err != nil {
			b.report.Warnings = append(b.report.Warnings, "new repositories: "+err.Error())
		}
	}
	if b.onEnded != nil {
		b.onEnded(b.report)
		b.onEnded = nil
	}
	c := *b.report
	c.Warnings = append([]string(nil), b.report.Warnings...)
	c.NewRepos = append([]string(nil), b.report.NewRepos...)
	return &c
}

// Close removes the run's private folder and releases everything the Box
// holds. Changes read from it must have been applied before.
func (b *Box) Close() error {
	b.mu.Lock()
	b.releaseLocked()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	// The egress socket is the run's way out: it stays open until the
	// init closes its end, when the run is gone.
	status, tmp, onClose := b.statusR, b.tmp, b.onClose
	if b.layerChild != nil {
		b.layerChild.Close() // never handed over: Wrap failed
		b.layerChild = nil
	}
	b.mu.Unlock()
	if onClose != nil {
		defer onClose()
	}
	if status != nil {
		// The init may still be exiting; its status pipe is read to the
		// end in the background, then closed.
		go func() {
			<-b.drained
			status.Close()
		}()
	}
	if tmp != "" {
		return removeAll(tmp)
	}
	return nil
}

// removeAll removes a run's private folder, whose overlay work folder may
// hold entries without permissions for anyone.
func removeAll(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// identity is who the sandbox runs as, inside and on the host.
type identity struct {
	inUID, inGID     int // what the command sees (the workspace owner's ids, or lcp's)
	hostUID, hostGID int // the kernel ids processes of the sandbox have
	root             bool
	idmap            bool // the workspace is shown through an idmapped mount
	ownUID, ownGID   int  // the workspace's owner
}
