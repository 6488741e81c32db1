package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// layerTestUID is the normal user TestNonRootLayer becomes.
const layerTestUID = 4243

// TestNonRootLayer runs the copy-on-write layer's cases from lcp running
// as a normal user (the test binary again, as uid 4243): the init makes
// the layer's tmpfs of the disk budget's size and sends it to lcp. Where
// the kernel refuses a normal user's namespaces, the child skips.
func TestNonRootLayer(t *testing.T) {
	if os.Getenv("LCP_SANDBOX_TEST_LAYER") != "" {
		nonRootLayerChild(t)
		return
	}
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("needs root to become a normal user")
	}
	dir := t.TempDir()
	// The normal user must reach the binary's copy.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "sandbox.test")
	raw, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, layerTestUID, layerTestUID); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestNonRootLayer$", "-test.v")
	cmd.Env = []string{"LCP_SANDBOX_TEST_LAYER=1", "PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=" + tmp}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: layerTestUID, Gid: layerTestUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP: TestNonRootLayer ") {
		t.Skipf("as a normal user: %s", out)
	}
	if err != nil {
		t.Fatalf("as a normal user: %v\n%s", err, out)
	}
	t.Logf("as a normal user:\n%s", out)
}

func nonRootLayerChild(t *testing.T) {
	if os.Getenv("LCP_SANDBOX_TEST_LAYER") == "engine" {
		layerEngine()
	}
	if os.Getuid() == 0 {
		t.Fatal("still root")
	}
	requireSandbox(t)
	t.Run("lcp killed in the middle of a run", func(t *testing.T) {
		if !Probe().DiskTotal {
			t.Skip("this kernel refuses a normal user's tmpfs layer: no disk total")
		}
		layerKilled(t)
	})
	// Hang detector only: each flood ends by its budget, minutes before.
	long := 5 * time.Minute
	for _, tc := range []struct {
		name, script string
		disk         int64
		refuse       bool   // the init's tmpfs probe fails: the fallback
		exceeded     string // the budget the run goes over, "" for none
	}{
		{"a 1 GB file under a 40 MiB budget", `head -c 1000000000 /dev/zero > big.bin; echo written; sleep 300`, 40 << 20, false, BudgetDisk},
		{"30000 empty files under a 4 MiB budget", `i=0; while [ $i -lt 30000 ]; do : > f$i; i=$((i+1)); done; sleep 300`, 4 << 20, false, BudgetDisk},
		{"within the budget", `echo n > new.txt; echo more >> f.txt`, 40 << 20, false, ""},
		{"the fallback: no tmpfs", `echo n > new.txt; echo more >> f.txt`, 40 << 20, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.refuse && !Probe().DiskTotal {
				t.Skip("this kernel refuses a normal user's tmpfs layer (before Linux 6.6, or a security module): no disk total")
			}
			layerTmpfsOff.Store(tc.refuse)
			defer layerTmpfsOff.Store(false)
			ws := t.TempDir()
			write(t, filepath.Join(ws, "f.txt"), "f\n")
			time.Sleep(2 * conflictSlack)
			before := diskUse(os.TempDir())
			r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite, Limits: Limits{Disk: tc.disk, WallTime: long}}, tc.script)
			if r.report.SetupErr != nil || r.report.Exceeded != tc.exceeded {
				t.Fatalf("exceeded %q, want %q (setup %v, accounting %q; stderr %s)",
					r.report.Exceeded, tc.exceeded, r.report.SetupErr, r.report.Accounting, tail(r.stderr))
			}
			inTmp := strings.HasPrefix(r.box.Upper(), os.TempDir())
			if fallback := strings.HasSuffix(r.report.Accounting, "; "+NoDiskTotal); fallback != tc.refuse || inTmp != tc.refuse {
				t.Errorf("accounting %q, layer %s: the fallback should be %v", r.report.Accounting, r.box.Upper(), tc.refuse)
			}
			if tc.exceeded != "" {
				if want := "of new and changed files"; !strings.Contains(r.report.BudgetText(), want) {
					t.Errorf("budget text %q lacks %q", r.report.BudgetText(), want)
				}
				if after := diskUse(os.TempDir()); after > before+1<<20 {
					t.Errorf("the temporary folder grew from %d to %d bytes", before, after)
				}
				return
			}
			cs, err := r.box.Changes(nil)
			if err != nil {
				t.Fatal(err)
			}
			if out := cs.Apply(func(*Change) bool { return true }, nil); len(out.Applied) != 2 {
				t.Fatalf("applied %v, conflicts %v, failed %v", out.Applied, out.Conflicts, out.Failed)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "f\nmore\n" {
				t.Errorf("f.txt = %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "new.txt")); string(b) != "n\n" {
				t.Errorf("new.txt = %q", b)
			}
		})
	}
}

// TestRecvFd: lcp takes exactly one descriptor with the init's byte, and
// reads a socket closed without one as "no layer".
func TestRecvFd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		send    int // descriptors sent with the byte; -1: close without sending
		wantFd  bool
		wantErr bool
	}{
		{"closed without a descriptor", -1, false, false},
		{"one descriptor", 1, true, false},
		{"two descriptors", 2, false, true},
		{"a byte without a descriptor", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.SetNonblock(fds[0], true); err != nil {
				t.Fatal(err)
			}
			ours := os.NewFile(uintptr(fds[0]), "ours")
			defer ours.Close()
			if tc.send >= 0 {
				var rights []byte
				if tc.send > 0 {
					sent := make([]int, tc.send)
					for i := range sent {
						sent[i] = int(os.Stdin.Fd())
					}
					rights = unix.UnixRights(sent...)
				}
				if err := unix.Sendmsg(fds[1], []byte{1}, rights, nil, 0); err != nil {
					t.Fatal(err)
				}
			}
			unix.Close(fds[1])
			fd, err := recvFd(ours)
			if fd >= 0 {
				unix.Close(fd)
			}
			if (fd >= 0) != tc.wantFd || (err != nil) != tc.wantErr {
				t.Errorf("fd %d, err %v; want a descriptor %v, an error %v", fd, err, tc.wantFd, tc.wantErr)
			}
		})
	}
}

// layerEngine is an lcp for layerKilled: it runs a copy-on-write command
// that writes 20 MB and says so, then waits to be killed.
func layerEngine() {
	ws := os.Getenv("LCP_LAYER_WS")
	cmd := exec.Command("/bin/sh", "-c", "head -c 20000000 /dev/zero > big.bin && echo written && sleep 300")
	cmd.Dir = ws
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	box, err := Wrap(cmd, &Policy{Workspace: ws, Mode: CopyOnWrite, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(3)
	}
	p, err := startLocked(cmd)
	box.Started()
	if err != nil {
		os.Exit(4)
	}
	err = p.Wait()
	fmt.Fprintf(os.Stderr, "engine: the run ended early: %v %+v\n", err, box.Report())
	os.Exit(0)
}

// layerKilled: lcp killed with SIGKILL while a run has written 20 MB
// leaves none of it in the temporary folder (the layer was a tmpfs that
// died with lcp's descriptor) nor in the workspace.
func layerKilled(t *testing.T) {
	ws := t.TempDir()
	before := diskUse(os.TempDir())
	engine := exec.Command(os.Args[0], "-test.run=^TestNonRootLayer$")
	engine.Env = append(os.Environ(), "LCP_SANDBOX_TEST_LAYER=engine", "LCP_LAYER_WS="+ws)
	engine.Stderr = os.Stderr
	out, err := engine.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	written := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "written" {
				written <- true
				return
			}
		}
		written <- false
	}()
	select {
	case ok := <-written:
		if !ok {
			engine.Process.Kill()
			engine.Wait()
			t.Fatal("the engine's run ended before it had written")
		}
	case <-time.After(2 * time.Minute): // hang detector only
		engine.Process.Kill()
		engine.Wait()
		t.Fatal("the engine's run never wrote")
	}
	engine.Process.Kill()
	_ = engine.Wait()
	if after := diskUse(os.TempDir()); after > before+1<<20 {
		t.Errorf("the temporary folder grew from %d to %d bytes after lcp was killed", before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "lcp-sandbox-*", "upper", "big.bin")); len(left) > 0 {
		t.Errorf("the run's file is in the temporary folder: %v", left)
	}
	if _, err := os.Stat(filepath.Join(ws, "big.bin")); err == nil {
		t.Error("the run's file reached the workspace")
	}
}
