package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcptools/lcp/sandbox/internal/sbinit"
)

var (
	probeOnce   sync.Once
	probeResult Status
)

// Probe reports what this machine allows the sandbox. The first call
// runs a real sandboxed command in a throwaway copy-on-write workspace
// (about as long as one command); later calls return the same answer,
// unless the sandbox is switched off (LCP_SANDBOX=off, ForceOff).
func Probe() Status {
	if reason := forcedOff(); reason != "" {
		st := probeFeatures()
		st.Available, st.Forced, st.Reason = false, true, reason
		return st
	}
	probeOnce.Do(func() { probeResult = probe() })
	return probeResult
}

// Supported reports, cheaply and without running anything, whether this
// machine is expected to have the sandbox: Linux with user namespaces, not
// switched off. Probe is the authority (it runs one); Supported is for
// describing tools without paying for that.
func Supported() bool {
	if forcedOff() != "" {
		return false
	}
	ok, _ := userNamespaces()
	return ok
}

func probe() Status {
	st := probeFeatures()
	if !st.UserNamespaces {
		st.Reason = "the kernel refuses user namespaces (" + st.UserNamespacesWhy + ")"
		return st
	}
	total, err := probeRun()
	if err != nil {
		st.Reason = err.Error()
		return st
	}
	st.Available, st.Overlay, st.DiskTotal = true, true, total
	return st
}

// probeRun runs `echo` in a copy-on-write sandbox and checks that its
// output and its file arrived: every namespace, the overlay, Landlock and
// the privilege drop work together. total says whether its layer had a
// size of its own (the disk total).
func probeRun() (total bool, err error) {
	ws, err := os.MkdirTemp("", "lcp-sandbox-probe-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(ws)
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		return false, fmt.Errorf("no %s to probe with", sh)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sh, "-c", "echo probe > probe.txt && echo ok")
	cmd.Dir = ws
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	box, err := wrap(cmd, &Policy{Workspace: ws, Mode: CopyOnWrite, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		return false, err
	}
	defer box.Close()
	err = cmd.Start()
	box.Started()
	if err != nil {
		return false, fmt.Errorf("start the sandbox: %w", err)
	}
	werr := cmd.Wait()
	r := box.Report()
	if r.SetupErr != nil {
		return false, r.SetupErr
	}
	if werr != nil || strings.TrimSpace(out.String()) != "ok" {
		return false, fmt.Errorf("the probe command failed (%v): %s", werr, strings.TrimSpace(errOut.String()))
	}
	if _, err := os.Stat(filepath.Join(box.Upper(), "probe.txt")); err != nil {
		return false, fmt.Errorf("the copy-on-write layer did not receive the probe's file: %w", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "probe.txt")); err == nil {
		return false, fmt.Errorf("the probe wrote through to the workspace")
	}
	return !strings.HasSuffix(r.Accounting, NoDiskTotal), nil
}

// probeFeatures reads what the kernel offers without running anything.
func probeFeatures() Status {
	st := Status{Root: os.Getuid() == 0, LandlockABI: LandlockABI()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		st.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	st.UserNamespaces, st.UserNamespacesWhy = userNamespaces()
	st.Cgroups, st.PidsController = cgroups()
	st.IdmappedMounts = st.Root // root can create them where the filesystem allows
	st.ProcessLimit = true
	st.Seccomp = sbinit.SeccompStatus()
	return st
}

func userNamespaces() (bool, string) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return false, "no user namespace support"
	}
	if v := readInt("/proc/sys/user/max_user_namespaces"); v == 0 {
		return false, "user.max_user_namespaces is 0"
	}
	if v := readInt("/proc/sys/kernel/unprivileged_userns_clone"); v == 0 && os.Getuid() != 0 {
		return false, "kernel.unprivileged_userns_clone is 0"
	}
	if v := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); v == 1 && os.Getuid() != 0 {
		return false, "AppArmor restricts unprivileged user namespaces"
	}
	return true, ""
}

func readInt(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	var n int
	if _, err := fmt.Sscan(string(raw), &n); err != nil {
		return -1
	}
	return n
}

// cgroups describes the cgroup layout: "v2" (unified, with controllers),
// "hybrid" (v1 controllers beside an empty v2 tree), "v1" or "none", and
// where the pids controller lives.
func cgroups() (string, string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "none", ""
	}
	defer f.Close()
	var v1, v2 bool
	pids := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) || len(fields) < 5 {
			continue
		}
		fstype, mnt, opts := fields[sep+1], fields[4], fields[sep+3]
		switch fstype {
		case "cgroup":
			v1 = true
			for _, o := range strings.Split(opts, ",") {
				if o == "pids" {
					pids = "v1 at " + mnt
				}
			}
		case "cgroup2":
			raw, _ := os.ReadFile(filepath.Join(mnt, "cgroup.controllers"))
			if len(bytes.TrimSpace(raw)) > 0 {
				v2 = true
				if bytes.Contains(raw, []byte("pids")) {
					pids = "v2 at " + mnt
				}
			}
		}
	}
	switch {
	case v2 && v1:
		return "hybrid", pids
	case v2:
		return "v2", pids
	case v1:
		return "hybrid (v1 controllers)", pids
	}
	return "none", pids
}
