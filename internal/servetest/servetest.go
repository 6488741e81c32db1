//go:build linux

// Package servetest runs lcp servers as real processes for the tests and
// benchmarks of serving at scale (the replica test behind nginx, the soak
// test, the abuse bench): it builds the lcp binary, starts `lcp mcp
// --http` and reads the address it prints, measures a process from /proc
// (resident memory, its peak, open files), and writes a folder of Python
// tools that misbehave on demand.
package servetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles the lcp command into dir and returns the binary's path.
// The race detector is left out: the processes are measured, not checked.
func Build(ctx context.Context, dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lcp")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/lcp")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/lcp: %v\n%s", err, out)
	}
	return bin, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the lcp module")
	}
	return filepath.Dir(mod), nil
}

// Proc is a running lcp server.
type Proc struct {
	Cmd *exec.Cmd
	// URL is the MCP endpoint it printed.
	URL string
	// Token is the bearer token it printed (when it made one up).
	Token string

	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
	err    error
}

var (
	servingRe = regexp.MustCompile(`serving MCP at (\S+)`)
	tokenRe   = regexp.MustCompile(`bearer token .*: (\S+)$`)
)

// Start runs bin with args (which must include --http) in its own process
// group and waits until it serves.
func Start(bin string, args []string, env []string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	// Its own process group (Kill takes the workers too); killed with
	// this process, should a benchmark be interrupted.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	errR, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := false
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			if m := servingRe.FindStringSubmatch(line); m != nil {
				p.URL = m[1]
			}
			if m := tokenRe.FindStringSubmatch(line); m != nil {
				p.Token = m[1]
			}
			// A token made up by the server is printed after the address.
			if p.URL != "" && !once && (p.Token != "" || tokenKnown(args)) {
				once = true
				close(ready)
			}
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, errR)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-ready:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before serving: %v\n%s", bin, p.err, p.Stderr())
	case <-time.After(60 * time.Second):
		p.Kill()
		return nil, fmt.Errorf("%s did not serve within a minute:\n%s", bin, p.Stderr())
	}
}

// tokenKnown reports whether the server prints no token line: --no-token,
// or a token given by flag or environment.
func tokenKnown(args []string) bool {
	for _, a := range args {
		if a == "--no-token" || a == "--token" || strings.HasPrefix(a, "--token=") {
			return true
		}
	}
	return os.Getenv("LCP_MCP_TOKEN") != ""
}

// Stderr returns what the process printed on stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// PID returns the process id.
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill kills the process group (the server and its Python workers).
func (p *Proc) Kill() {
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
}

// Exited is closed once the process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Wait waits for the process to exit, at most d, and returns its error;
// it kills it when the time is up.
func (p *Proc) Wait(d time.Duration) error {
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		p.Kill()
		<-p.exited
		return fmt.Errorf("did not exit within %s (killed)", d)
	}
}

// Stats are a process's figures read from /proc.
type Stats struct {
	RSS     int64 // resident memory, bytes
	PeakRSS int64 // the peak of resident memory (VmHWM), bytes
	FDs     int   // open file descriptors
	Threads int
}

// Measure reads a process's figures from /proc.
func Measure(pid int) (Stats, error) {
	var st Stats
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			st.RSS = n << 10
		case "VmHWM":
			st.PeakRSS = n << 10
		case "Threads":
			st.Threads = int(n)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err == nil {
		st.FDs = len(fds)
	}
	return st, nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// MB formats bytes as mebibytes.
func MB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
