package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// txnCase builds a workspace and the upper layer of a run over it.
type txnCase struct {
	name string
	old  func(t testing.TB, ws string)
	up   func(t testing.TB, up string)
}

func mustWrite(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// whiteout marks p deleted in an upper layer.
func whiteout(t testing.TB, p string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, unix.Mknod(p, unix.S_IFCHR, 0))
}

var txnCases = []txnCase{
	{
		// One step: atomic by itself, without a journal.
		name: "single",
		old: func(t testing.TB, ws string) {
			mustWrite(t, filepath.Join(ws, "d/only.txt"), []byte("old"))
		},
		up: func(t testing.TB, up string) {
			mustWrite(t, filepath.Join(up, "d/only.txt"), []byte("new"))
		},
	},
	{
		name: "mixed",
		old: func(t testing.TB, ws string) {
			mustWrite(t, filepath.Join(ws, "changed.txt"), []byte("old"))
			mustWrite(t, filepath.Join(ws, "deleted.txt"), []byte("gone soon"))
			mustWrite(t, filepath.Join(ws, "dir2file/a"), []byte("a"))
			mustWrite(t, filepath.Join(ws, "dir2file/sub/b"), []byte("b"))
			mustWrite(t, filepath.Join(ws, "file2dir"), []byte("was a file"))
			must(t, os.Symlink("changed.txt", filepath.Join(ws, "link2file")))
			mustWrite(t, filepath.Join(ws, "file2link"), []byte("was a file"))
			mustWrite(t, filepath.Join(ws, "big.bin"), bytes.Repeat([]byte("o"), 3<<20))
			mustWrite(t, filepath.Join(ws, "deldir/x"), []byte("x"))
		},
		up: func(t testing.TB, up string) {
			mustWrite(t, filepath.Join(up, "changed.txt"), []byte("new content"))
			whiteout(t, filepath.Join(up, "deleted.txt"))
			mustWrite(t, filepath.Join(up, "dir2file"), []byte("now a file"))
			mustWrite(t, filepath.Join(up, "file2dir/child"), []byte("inside"))
			mustWrite(t, filepath.Join(up, "link2file"), []byte("now a file"))
			must(t, os.Symlink("changed.txt", filepath.Join(up, "file2link")))
			mustWrite(t, filepath.Join(up, "big.bin"), bytes.Repeat([]byte("n"), 3<<20))
			mustWrite(t, filepath.Join(up, "new/deep/n.txt"), []byte("n"))
			whiteout(t, filepath.Join(up, "deldir"))
		},
	},
	{
		name: "thousands",
		old: func(t testing.TB, ws string) {
			for i := range 900 {
				mustWrite(t, filepath.Join(ws, "d", strconv.Itoa(i%7), fmt.Sprintf("f%d", i)), []byte("old"))
			}
		},
		up: func(t testing.TB, up string) {
			for i := range 900 {
				p := filepath.Join(up, "d", strconv.Itoa(i%7), fmt.Sprintf("f%d", i))
				if i%3 == 0 {
					whiteout(t, p)
				} else {
					mustWrite(t, p, []byte("new"))
				}
			}
			for i := range 100 {
				mustWrite(t, filepath.Join(up, "added", fmt.Sprintf("n%d", i)), []byte("n"))
			}
		},
	},
}

// setup builds a case's workspace and layer and reads its change set.
func (c txnCase) setup(t testing.TB, root string) *ChangeSet {
	ws, up := filepath.Join(root, "ws"), filepath.Join(root, "up")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.MkdirAll(up, 0o755))
	c.old(t, ws)
	c.up(t, up)
	// The run began after the workspace was made (and after the slack).
	cs, err := readChanges(up, ws, time.Now().Add(time.Second), [2]int{-1, -1}, nil, nil)
	must(t, err)
	// Syncs matter for power loss, not for a crash of the process; the
	// big case skips them to keep the test quick.
	cs.NoSync = c.name == "thousands"
	return cs
}

// treeState describes a tree: each entry's type, mode and content.
func treeState(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := rel + " " + info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(data)
			line += " " + hex.EncodeToString(h[:6])
		}
		lines = append(lines, line)
		return nil
	})
	must(t, err)
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// isolate points the journals at a test folder and treats this process
// as dead for recovery, as a crashed lcp would be.
func isolate(t *testing.T) string {
	dir := t.TempDir()
	oldDir, oldAlive := journalDir, alive
	journalDir = func() string { return dir }
	alive = func(pid int, start uint64) bool {
		return pid != os.Getpid() && oldAlive(pid, start)
	}
	t.Cleanup(func() { journalDir, alive, crashPoint = oldDir, oldAlive, nil })
	return dir
}

type crashed struct{ n int }

// applyUntil applies cs, stopping at crash point n; it reports whether
// the point was reached.
func applyUntil(cs *ChangeSet, n int) (out *Outcome, stopped bool) {
	crashPoint = func(k int) {
		if k == n {
			panic(crashed{k})
		}
	}
	defer func() {
		crashPoint = nil
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			stopped = true
		}
	}()
	return cs.Apply(func(*Change) bool { return true }, nil), false
}

func noLeftovers(t *testing.T, ws, journals string) {
	t.Helper()
	names, _ := readNames(ws)
	for _, n := range names {
		if strings.HasPrefix(n, stagingPrefix) {
			t.Errorf("staging folder %s left in the workspace", n)
		}
	}
	if left, _ := readNames(journals); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
}

// At every crash point of the applier, recovery leaves the workspace as
// it was before the apply or as the whole set makes it, never between.
func TestCrashAtEveryPoint(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making whiteouts (character devices 0:0) needs root")
	}
	for _, tc := range txnCases {
		t.Run(tc.name, func(t *testing.T) {
			journals := isolate(t)
			// The states before and after a complete apply.
			ref := t.TempDir()
			cs := tc.setup(t, ref)
			before := treeState(t, cs.Workspace)
			out := cs.Apply(func(*Change) bool { return true }, nil)
			if len(out.Failed)+len(out.Conflicts)+len(out.Withheld) > 0 {
				t.Fatalf("complete apply: failed %v conflicts %v", out.Failed, out.Conflicts)
			}
			after := treeState(t, cs.Workspace)
			if before == after {
				t.Fatal("the set changes nothing")
			}
			points := 4 + len(cs.Changes)
			var try []int
			if points <= 40 {
				for n := range points {
					try = append(try, n)
				}
			} else {
				try = []int{0, 1, 2, points / 2, points - 2, points - 1}
			}
			for _, n := range try {
				root := t.TempDir()
				cs := tc.setup(t, root)
				_, stopped := applyUntil(cs, n)
				if !stopped {
					continue // fewer steps than points (a change needing none)
				}
				r, err := Recover(cs.Workspace)
				if err != nil {
					t.Fatalf("point %d: recover: %v", n, err)
				}
				got := treeState(t, cs.Workspace)
				// Before the journal (for one step: before the step) the
				// set is undone, after it completed.
				old := n == 0 || tc.name == "single" && n == 1
				switch {
				case old && got != before:
					t.Errorf("point %d: not the old state after recovery (%v)", n, r.Completed)
				case !old && got != after:
					t.Errorf("point %d: not the new state after recovery:\n%s\nwant\n%s", n, got, after)
				}
				if !old && tc.name != "single" && n < points-1 && len(r.Completed) != 1 {
					t.Errorf("point %d: recovery says %v", n, r.Completed)
				}
				noLeftovers(t, cs.Workspace, journals)
			}
		})
	}
}

// The child of TestKill9DuringApply: applies the set in $LCP_TXN_ROOT and
// kills itself with SIGKILL at crash point $LCP_TXN_POINT.
// TestMain lets the test binary be the sandbox's init (the sandbox
// re-executes it for every sandboxed command the tests run) and the
// applier that TestKill9DuringApply kills.
func TestMain(m *testing.M) {
	Main()
	if root := os.Getenv("LCP_TXN_ROOT"); root != "" {
		n, _ := strconv.Atoi(os.Getenv("LCP_TXN_POINT"))
		journalDir = func() string { return filepath.Join(root, "journals") }
		crashPoint = func(k int) {
			if k == n {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		cs, err := readChanges(filepath.Join(root, "up"), filepath.Join(root, "ws"), time.Now().Add(time.Second), [2]int{-1, -1}, nil, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cs.Apply(func(*Change) bool { return true }, nil)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A real lcp process killed with SIGKILL at random points of an apply:
// the next process's recovery finds the old or the new state.
func TestKill9DuringApply(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making whiteouts (character devices 0:0) needs root")
	}
	bin, err := os.Executable()
	must(t, err)
	tc := txnCases[1]
	ref := t.TempDir()
	isolate(t)
	cs := tc.setup(t, ref)
	before := treeState(t, cs.Workspace)
	cs.Apply(func(*Change) bool { return true }, nil)
	after := treeState(t, cs.Workspace)
	points := 4 + len(cs.Changes)
	for range 8 {
		n := rand.IntN(points)
		root := t.TempDir()
		tc.setup(t, root)
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), "LCP_TXN_ROOT="+root, "LCP_TXN_POINT="+strconv.Itoa(n))
		err := cmd.Run()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if err != nil && !killed {
			t.Fatalf("point %d: child ended with %v", n, err)
		}
		journalDir = func() string { return filepath.Join(root, "journals") }
		ws := filepath.Join(root, "ws")
		if _, err := Recover(ws); err != nil {
			t.Fatalf("point %d: recover: %v", n, err)
		}
		if got := treeState(t, ws); got != before && got != after {
			t.Errorf("point %d: half-applied after recovery:\n%s", n, got)
		} else if n > 0 && got != after {
			t.Errorf("point %d: journal written but the set was not completed", n)
		}
		noLeftovers(t, ws, filepath.Join(root, "journals"))
	}
}

// On a full disk, a folder replaced by a big file keeps the folder: the
// file cannot be staged, so nothing is changed.
func TestFullDiskChangesNothing(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	isolate(t)
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	ws, up := filepath.Join(mnt, "ws"), filepath.Join(t.TempDir(), "up")
	mustWrite(t, filepath.Join(ws, "d/keep.txt"), []byte("precious"))
	mustWrite(t, filepath.Join(ws, "other.txt"), []byte("old"))
	mustWrite(t, filepath.Join(up, "d"), bytes.Repeat([]byte{0}, 15<<20))
	mustWrite(t, filepath.Join(up, "other.txt"), []byte("new"))
	before := treeState(t, ws)
	cs, err := readChanges(up, ws, time.Now().Add(time.Second), [2]int{-1, -1}, nil, nil)
	must(t, err)
	out := cs.Apply(func(*Change) bool { return true }, nil)
	if len(out.Applied) != 0 || len(out.Failed) != 1 || !errors.Is(out.Failed[0].Err, unix.ENOSPC) || len(out.Withheld) != 1 {
		t.Fatalf("applied %v failed %v withheld %v, want d failed with ENOSPC and other.txt withheld", out.Applied, out.Failed, out.Withheld)
	}
	if got := treeState(t, ws); got != before {
		t.Errorf("the workspace changed:\n%s\nwant\n%s", got, before)
	}
}

// A read-only workspace: the apply fails before changing anything.
func TestReadOnlyWorkspaceChangesNothing(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	isolate(t)
	ws, up := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(ws, "f.txt"), []byte("old"))
	mustWrite(t, filepath.Join(up, "f.txt"), []byte("new"))
	must(t, unix.Mount(ws, ws, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(ws, unix.MNT_DETACH) })
	must(t, unix.Mount("", ws, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""))
	cs, err := readChanges(up, ws, time.Now().Add(time.Second), [2]int{-1, -1}, nil, nil)
	must(t, err)
	out := cs.Apply(func(*Change) bool { return true }, nil)
	if len(out.Applied) != 0 || len(out.Failed) != 1 || !errors.Is(out.Failed[0].Err, unix.EROFS) {
		t.Fatalf("applied %v failed %v, want f.txt failed with EROFS", out.Applied, out.Failed)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "old" {
		t.Errorf("f.txt = %q", b)
	}
}

// Stale staging folders and layers of dead processes are swept; a live
// process's are kept.
func TestRecoverSweepsOnlyTheDead(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	must(t, dead.Run())
	deadPID := dead.Process.Pid
	live, err := procStart(os.Getppid())
	must(t, err)
	stale := fmt.Sprintf("%s%d-%d-aa", stagingPrefix, deadPID, uint64(1<<64-1))
	kept := fmt.Sprintf("%s%d-%d-bb", stagingPrefix, os.Getppid(), live)
	mustWrite(t, filepath.Join(ws, stale, "0"), []byte("staged"))
	mustWrite(t, filepath.Join(ws, kept, "0"), []byte("staged"))
	mustWrite(t, filepath.Join(tmp, "lcp-sandbox-1", layerOwnerFile), []byte(fmt.Sprintf("%d %d\n", deadPID, uint64(1<<64-1))))
	mustWrite(t, filepath.Join(tmp, "lcp-sandbox-2", layerOwnerFile), []byte(fmt.Sprintf("%d %d\n", os.Getppid(), live)))
	r, err := Recover(ws)
	must(t, err)
	if len(r.Removed) != 2 {
		t.Errorf("removed %v, want the dead process's staging folder and layers", r.Removed)
	}
	for _, p := range []string{filepath.Join(ws, kept), filepath.Join(tmp, "lcp-sandbox-2")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a live process's %s was removed", p)
		}
	}
}

// A corrupt journal, or one from a newer lcp, is an error and is left
// alone.
func TestRecoverBadJournal(t *testing.T) {
	dir := isolate(t)
	ws := t.TempDir()
	base := strings.TrimSuffix(journalPath(ws, stagingPrefix), ".json")
	for name, data := range map[string]string{"1-1-aa": "{not json", "2-2-bb": `{"version": 99}`} {
		must(t, os.WriteFile(base+name+".json", []byte(data), 0o600))
	}
	r, err := Recover(ws)
	if err == nil || len(r.Errors) != 2 {
		t.Fatalf("recover: %v %v, want two errors", r, err)
	}
	for _, want := range []string{"corrupt", "version 99"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if left, _ := readNames(dir); len(left) != 2 {
		t.Errorf("journals %v, want both left alone", left)
	}
	// Nothing is applied over an interrupted set that could not be
	// recovered.
	up := t.TempDir()
	mustWrite(t, filepath.Join(up, "new.txt"), []byte("new"))
	cs, err := readChanges(up, ws, time.Now(), [2]int{-1, -1}, nil, nil)
	must(t, err)
	out := cs.Apply(func(*Change) bool { return true }, nil)
	if len(out.Applied) != 0 || len(out.Failed) != 1 || !strings.Contains(out.Failed[0].Err.Error(), "awaits recovery") {
		t.Errorf("applied %v failed %v, want new.txt failed: awaits recovery", out.Applied, out.Failed)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt applied over an unrecovered journal")
	}
}

// Metadata is data: new times and extended attributes of existing files
// ask like content, and are applied; new entries get the umask's modes.
func TestMetadataIsData(t *testing.T) {
	requireSandbox(t)
	isolate(t)
	ws := t.TempDir()
	write(t, filepath.Join(ws, "times.txt"), "t")
	write(t, filepath.Join(ws, "attr.txt"), "a")
	if err := unix.Setxattr(filepath.Join(ws, "attr.txt"), "user.probe", []byte("1"), 0); err != nil {
		t.Skipf("no user extended attributes here: %v", err)
	}
	time.Sleep(2 * conflictSlack) // older than the run
	r := runIn(t, &Policy{Workspace: ws, Mode: CopyOnWrite}, `touch -d 2001-01-01 times.txt
python3 -c "import os; os.setxattr('attr.txt', 'user.origin', b'sandbox')"
mkdir open && chmod 0777 open
echo w > open/w.txt && chmod 0666 open/w.txt`)
	if r.err != nil || r.report.SetupErr != nil {
		t.Fatalf("run: %v %v\n%s", r.err, r.report.SetupErr, r.stderr)
	}
	cs, err := r.box.Changes(nil)
	must(t, err)
	got := map[string]string{}
	for _, c := range cs.Changes {
		got[c.Path] = fmt.Sprintf("%s risky=%v", c.Kind, c.Risky)
	}
	for p, w := range map[string]string{"times.txt": "touched risky=true", "attr.txt": "xattr risky=true",
		"open": "added risky=false", "open/w.txt": "added risky=false"} {
		if got[p] != w {
			t.Errorf("%s: %q, want %q", p, got[p], w)
		}
	}
	out := cs.Apply(func(*Change) bool { return true }, nil)
	if len(out.Applied) != 4 {
		t.Fatalf("applied %v failed %v conflicts %v", out.Applied, out.Failed, out.Conflicts)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "times.txt")); fi == nil || fi.ModTime().Year() != 2001 {
		t.Errorf("times.txt times not applied: %v", fi)
	}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(filepath.Join(ws, "attr.txt"), "user.origin", buf); err != nil || string(buf[:n]) != "sandbox" {
		t.Errorf("attr.txt: user.origin %q %v", buf[:max(n, 0)], err)
	}
	mask := os.FileMode(umask())
	for p, m := range map[string]os.FileMode{"open": 0o777 &^ mask, "open/w.txt": 0o666 &^ mask} {
		if fi, err := os.Stat(filepath.Join(ws, p)); err != nil || fi.Mode().Perm() != m {
			t.Errorf("%s: mode %v, want %v (umask %o)", p, fi.Mode().Perm(), m, mask)
		}
	}
}

// An error in the middle of the steps (an immutable folder refuses the
// exchange, even to root) undoes the steps done before it.
func TestStepErrorUndoesTheSet(t *testing.T) {
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skip("no chattr here")
	}
	isolate(t)
	ws, up := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(ws, "d/f.txt"), []byte("old"))
	mustWrite(t, filepath.Join(ws, "b.txt"), []byte("old b"))
	mustWrite(t, filepath.Join(up, "a.txt"), []byte("new a"))
	mustWrite(t, filepath.Join(up, "b.txt"), []byte("new b"))
	mustWrite(t, filepath.Join(up, "d/f.txt"), []byte("new"))
	before := treeState(t, ws)
	if out, err := exec.Command(chattr, "+i", filepath.Join(ws, "d")).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(chattr, "-i", filepath.Join(ws, "d")).Run() })
	cs, err := readChanges(up, ws, time.Now().Add(time.Second), [2]int{-1, -1}, nil, nil)
	must(t, err)
	out := cs.Apply(func(*Change) bool { return true }, nil)
	if len(out.Applied) != 0 || len(out.Failed) != 1 || out.Failed[0].Change.Path != "d/f.txt" || len(out.Withheld) != 2 {
		t.Fatalf("applied %v failed %v withheld %v, want d/f.txt failed, the rest withheld", out.Applied, out.Failed, out.Withheld)
	}
	if !errors.Is(out.Failed[0].Err, unix.EPERM) {
		t.Errorf("error %v, want EPERM", out.Failed[0].Err)
	}
	if got := treeState(t, ws); got != before {
		t.Errorf("the workspace changed:\n%s\nwant\n%s", got, before)
	}
}
