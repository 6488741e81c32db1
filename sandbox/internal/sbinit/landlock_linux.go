package sbinit

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is used directly through its three system calls: the sandbox
// needs one thing, restricting the calling thread right before execve,
// and the go-landlock module's system-call package links libcap's psx,
// which in cgo builds wraps pthread_create for the whole program (see
// docs/decisions.md).

// LandlockABI returns the Landlock ABI version of the kernel, 0 when it
// has none (or it is disabled).
func LandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// llWrite holds every right that changes something; llFileRights
	// those that apply to files (the others are refused on file rules).
	llWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV | unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// llHandled returns the filesystem rights and scopes ABI v knows.
func llHandled(v int) (fs, scoped uint64) {
	switch {
	case v >= 9:
		fs = 1<<17 - 1
	case v >= 5:
		fs = 1<<16 - 1
	case v >= 3:
		fs = 1<<15 - 1
	case v >= 2:
		fs = 1<<14 - 1
	case v >= 1:
		fs = 1<<13 - 1
	}
	if v >= 6 {
		scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	return fs, scoped
}

// devFiles are the device files a sandboxed command may write.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// restrictLandlock restricts the calling thread (and what it executes)
// with Landlock, as a second layer under the mounts: read and execute
// everywhere visible, write only where the sandbox shows something
// writable, no signals to processes outside the sandbox and no abstract
// UNIX sockets outside it. TCP is not restricted: the network namespace
// already cuts it, and loopback servers of tests inside keep working.
// A kernel without Landlock is not an error: the namespaces are the
// boundary.
func restrictLandlock(cfg *Config) error {
	v := LandlockABI()
	if v == 0 {
		return nil
	}
	handled, scoped := llHandled(v)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled, Scoped: scoped}
	// Only the fields up to Scoped: older kernels refuse a larger struct
	// whose extra fields they do not know unless they are zero, which
	// they are; the size keeps this true on every version.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), 24, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	add := func(path string, access uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llFileRights
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access & handled, Parent_fd: int32(pfd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		if errno != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
		}
		return nil
	}
	for _, p := range cfg.ReadOnly {
		if err := add(p, llRead); err != nil {
			return err
		}
	}
	for _, p := range cfg.ReadWrite {
		if err := add(p, llRead|llWrite); err != nil {
			return err
		}
	}
	for _, p := range devFiles {
		if err := add(p, unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|
			unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV); err != nil {
			return err
		}
	}
	// landlock_restrict_self applies to the calling thread only, which
	// is the one that executes the command.
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}
