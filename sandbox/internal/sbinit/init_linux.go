package sbinit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Enter runs the sandbox's init, or the idmap holder, and exits when
// the sandbox started this process as one (Env set); otherwise it
// returns at once. The boot package's initializer and sandbox.Main call
// it: the binary opts in by linking the one or calling the other.
func Enter() {
	v, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	mode, arg, _ := strings.Cut(v, ":")
	switch mode {
	case "init":
		os.Exit(runInit(arg))
	case "hold":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
}

// initState is the init's view of its configuration and status pipe.
type initState struct {
	cfg    Config
	cfgFd  int
	status *os.File
}

func (s *initState) send(m Status) {
	if s.status == nil {
		return
	}
	_, _ = s.status.Write(m.Line())
}

// fail reports a set-up failure and returns the init's exit code.
func (s *initState) fail(step string, err error) int {
	s.send(Status{Type: "error", Step: step, Err: err.Error()})
	fmt.Fprintf(os.Stderr, "lcp sandbox: set-up failed (%s): %v\n", step, err)
	return 126
}

func readConfig(arg string) (*initState, error) {
	fd, err := strconv.Atoi(arg)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("bad configuration descriptor %q", arg)
	}
	f := os.NewFile(uintptr(fd), "config")
	raw, err := io.ReadAll(io.NewSectionReader(f, 0, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	s := &initState{cfgFd: fd}
	if s.cfg, err = DecodeConfig(raw); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	s.status = os.NewFile(uintptr(s.cfg.Status), "status")
	return s, nil
}

// runInit is the sandbox's init: PID 1 of its namespaces. It builds the
// root, drops every privilege and starts the command, forwards signals to
// it, reaps orphans, and exits when the command exits — after killing
// whatever is left in the namespace (the kernel would too).
func runInit(arg string) (code int) {
	var s *initState
	defer quietFailure(&s, &code)
	sigs := catchSignals()
	s, err := readConfig(arg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lcp sandbox: %v\n", err)
		return 126
	}
	// Nothing inherited past the passed-through descriptors may reach the
	// command; the detached mounts are closed once attached.
	_ = unix.CloseRange(uint(3+s.cfg.Passthrough), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// The command must not read the init's memory or descriptors.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if os.Getpid() != 1 {
		return s.fail("namespaces", errors.New("the init is not PID 1 of a new PID namespace"))
	}
	warnings, step, err := buildRoot(&s.cfg)
	if s.cfg.Layer != nil {
		// Sent or not, lcp learns it by this end closing.
		_ = unix.Close(s.cfg.Layer.Sock)
	}
	for _, w := range warnings {
		s.send(Status{Type: "warn", Step: "mount", Err: w})
	}
	if err != nil {
		return s.fail(step, err)
	}
	if !s.cfg.Network {
		if err := loopbackUp(); err != nil {
			if s.cfg.Egress != nil {
				return s.fail("egress", fmt.Errorf("loopback: %w", err))
			}
			s.send(Status{Type: "warn", Step: "loopback", Err: err.Error()})
		}
	}
	if s.cfg.Egress != nil {
		if err := startEgress(s.cfg.Egress); err != nil {
			return s.fail("egress", err)
		}
	}
	_ = unix.Sethostname([]byte("lcp-sandbox"))

	if s.cfg.Gate > 0 {
		if err := waitGate(s.cfg.Gate); err != nil {
			return s.fail("budget", err)
		}
	}
	pid, step, err := s.startCommand()
	if err != nil {
		return s.fail(step, err)
	}
	return s.supervise(pid, sigs)
}

// startCommand drops every capability, sets no_new_privs and restricts
// Landlock on this thread, then starts the command from it: what the
// thread set is inherited by the command and cannot be undone (the init's
// other threads keep their privileges, which nothing uses any more). The
// command starts traced, so that it stops right after its execve, before
// running anything: its resource limits are set then, from the init, which
// keeps none itself (the process limit would stop its runtime's threads).
func (s *initState) startCommand() (int, string, error) {
	runtime.LockOSThread() // credentials, Landlock and ptrace are per thread
	path, err := lookPath(s.cfg.Path, s.cfg.Env)
	if err != nil {
		return 0, "exec", err
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i := 0; i < s.cfg.Passthrough; i++ {
		files = append(files, os.NewFile(uintptr(3+i), "pass"))
	}
	if err := dropPrivileges(); err != nil {
		return 0, "capabilities", err
	}
	if err := restrictLandlock(&s.cfg); err != nil {
		return 0, "landlock", err
	}
	if s.cfg.Seccomp {
		if err := installSeccomp(); errors.Is(err, errNoSeccompArch) {
			s.send(Status{Type: "warn", Step: "seccomp", Err: err.Error()})
		} else if err != nil {
			return 0, "seccomp", err
		}
	}
	proc, err := os.StartProcess(path, s.cfg.Args, &os.ProcAttr{
		Dir: s.cfg.Dir, Env: s.cfg.Env, Files: files,
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Ptrace: true},
	})
	if err != nil {
		return 0, "exec", fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	pid := proc.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, "exec", fmt.Errorf("the command did not stop at its start (%v)", err)
	}
	lim := s.cfg.Limits
	if s.cfg.PidsGroup && lim.Processes > 0 {
		lim.Processes += 2 * InitTasks
	}
	if err := setLimits(pid, lim); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, "limits", err
	}
	if err := unix.PtraceDetach(pid); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, "exec", fmt.Errorf("detach: %w", err)
	}
	s.send(Status{Type: "ready"})
	return pid, "", nil
}

// supervise waits for the command, forwarding signals to its process
// group and reaping every orphan, and reports how it ended.
func (s *initState) supervise(pid int, sigs chan os.Signal) int {
	go forwardSignals(sigs, pid)
	var peak atomic.Int64
	done := make(chan struct{})
	go samplePeak(&peak, done)
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			close(done)
			s.send(Status{Type: "exit", Code: 126, PeakProcs: int(peak.Load())})
			return 126
		}
		if got == pid {
			break
		}
	}
	close(done)
	// The command is done: end what it left running and release the
	// output pipes now, so that lcp has the whole result before the
	// (slow) teardown of the namespaces that the init's exit starts.
	_ = unix.Kill(-1, unix.SIGKILL)
	for {
		if _, err := unix.Wait4(-1, nil, 0, nil); err != nil && err != unix.EINTR {
			break
		}
	}
	for fd := 0; fd < 3+s.cfg.Passthrough; fd++ {
		_ = unix.Close(fd)
	}
	m := Status{Type: "exit", PeakProcs: int(peak.Load())}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_CHILDREN, &ru) == nil {
		m.MaxRSS = int64(ru.Maxrss) << 10
	}
	switch {
	case ws.Signaled():
		m.Code, m.Signal = 128+int(ws.Signal()), unix.SignalName(ws.Signal())
	default:
		m.Code = ws.ExitStatus()
	}
	s.send(m)
	return m.Code
}

// samplePeak records the most processes seen at once, to tell the
// process limit from other failures.
func samplePeak(peak *atomic.Int64, done chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if n := countProcs(); int64(n) > peak.Load() {
			peak.Store(int64(n))
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

func countProcs() int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	n := 0
	for _, name := range names {
		if name != "" && name[0] >= '1' && name[0] <= '9' {
			n++
		}
	}
	return n - 1 // the init
}

// lookPath finds the program in the sandbox as a shell would, with the
// command's own PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("%s is not visible in the sandbox (%w)", name, err)
		}
		return name, nil
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s was not found in the sandbox's PATH", name)
}

// setLimits sets the resource limits of process pid.
func setLimits(pid int, l Limits) error {
	set := func(res int, cur, max uint64) error {
		if cur == unix.RLIM_INFINITY {
			// No limit of lcp's own: the command keeps what it inherited
			// (raising a hard limit is not the sandbox's to do).
			return nil
		}
		lim := &unix.Rlimit{Cur: cur, Max: max}
		if err := unix.Prlimit(pid, res, lim, nil); err != nil {
			return fmt.Errorf("rlimit %d: %w", res, err)
		}
		return nil
	}
	val := func(v int64) uint64 {
		if v < 0 {
			return unix.RLIM_INFINITY
		}
		return uint64(v)
	}
	cpu := val(int64(l.CPUTime / time.Second))
	cpuMax := cpu
	if cpu != unix.RLIM_INFINITY {
		cpuMax = cpu + 5 // SIGXCPU first, SIGKILL a little later
	}
	return errors.Join(
		set(unix.RLIMIT_DATA, val(l.Memory), val(l.Memory)),
		set(unix.RLIMIT_NPROC, val(int64(l.Processes)), val(int64(l.Processes))),
		set(unix.RLIMIT_FSIZE, val(l.FileSize), val(l.FileSize)),
		set(unix.RLIMIT_CPU, cpu, cpuMax),
		set(unix.RLIMIT_NOFILE, val(int64(l.OpenFiles)), val(int64(l.OpenFiles))),
		set(unix.RLIMIT_CORE, 0, 0),
	)
}

// waitGate waits until lcp has put the init in the run's control groups.
func waitGate(fd int) error {
	f := os.NewFile(uintptr(fd), "gate")
	defer f.Close()
	var b [1]byte
	for {
		n, err := f.Read(b[:])
		if n == 1 {
			return nil
		}
		if err != nil {
			return errors.New("lcp could not put the run in its control groups, so the command did not start")
		}
	}
}
