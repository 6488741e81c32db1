package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// idmaps holds, for the life of lcp, one user namespace per mapping used
// for idmapped mounts: a namespace outlives its last process when a
// descriptor refers to it, so it is made once.
var (
	idmapMu sync.Mutex
	idmaps  = map[[4]int]int{}
)

// idmapUserns returns a descriptor of a user namespace that maps uid to
// hostUID and gid to hostGID: an idmapped mount through it shows files of
// uid:gid as hostUID:hostGID's. Only root can create one.
func idmapUserns(uid, gid, hostUID, hostGID int) (int, error) {
	key := [4]int{uid, gid, hostUID, hostGID}
	idmapMu.Lock()
	defer idmapMu.Unlock()
	if fd, ok := idmaps[key]; ok {
		return fd, nil
	}
	// A process must live in the namespace while its descriptor is
	// opened: lcp itself, started in "hold" mode, which waits for the end
	// of its standard input.
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer w.Close()
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{"lcp-sandbox-hold"}, Env: []string{initEnv + "=hold"},
		Stdin: r, Dir: "/",
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: hostUID, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: hostGID, Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		}}
	err = cmd.Start()
	r.Close()
	if err != nil {
		return -1, fmt.Errorf("idmap namespace: %w", err)
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	w.Close()
	_ = cmd.Wait()
	if err != nil {
		return -1, fmt.Errorf("idmap namespace: %w", err)
	}
	idmaps[key] = fd
	return fd, nil
}
