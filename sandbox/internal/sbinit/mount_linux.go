package sbinit

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The init first moves into a scratch root of its own, with the host's
// root reachable at /oldroot: host paths are then read as /oldroot/<path>
// whatever the init mounts over them, the new root is assembled at
// /newroot, and everything else (staged layers, throwaway cache layers)
// lives beside it and disappears with the scratch root.
const (
	oldRoot = "/oldroot"
	newRoot = "/newroot"
	stage   = "/stage"
	scratch = "/scratch"
)

// builder assembles the sandbox's root.
type builder struct {
	cfg        *Config
	scratchUp  bool
	warnings   []string
	stageCount int
	layerSent  bool // the copy-on-write layer's tmpfs went to lcp
}

// buildRoot builds the sandbox's root from cfg.Mounts and moves into it.
// It returns the steps it degraded, or the failing step with the error.
func buildRoot(cfg *Config) (warnings []string, step string, err error) {
	b := &builder{cfg: cfg}
	step, err = b.build()
	return b.warnings, step, err
}

func (b *builder) build() (string, error) {
	cfg := b.cfg
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "mount propagation", err
	}
	base := ""
	for _, d := range []string{"/tmp", "/mnt", "/var/tmp", "/dev"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			base = d
			break
		}
	}
	if base == "" {
		return "scratch root", errors.New("no folder to mount a scratch root on")
	}
	if err := unix.Mount("lcp-sandbox", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=1m"); err != nil {
		return "scratch root", err
	}
	for _, d := range []string{oldRoot, newRoot, stage, scratch} {
		if err := os.Mkdir(base+d, 0o700); err != nil {
			return "scratch root", err
		}
	}
	if err := unix.PivotRoot(base, base+oldRoot); err != nil {
		return "pivot_root", err
	}
	if err := unix.Chdir("/"); err != nil {
		return "pivot_root", err
	}
	if err := unix.Mount("lcp-sandbox-root", newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return "new root", err
	}
	for _, m := range cfg.Mounts {
		if err := b.attach(m); err != nil {
			return "mount " + m.Dst, err
		}
	}
	if err := unix.Chdir(newRoot); err != nil {
		return "pivot_root", err
	}
	// Stack the new root over the scratch root and drop the latter with
	// the host's root below it.
	if err := unix.PivotRoot(".", "."); err != nil {
		return "pivot_root", err
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return "detach the host's root", err
	}
	if err := unix.Chdir("/"); err != nil {
		return "pivot_root", err
	}
	if err := setAttr("/", false, unix.MOUNT_ATTR_RDONLY); err != nil {
		return "read-only root", err
	}
	return "", nil
}

func (b *builder) attach(m Mount) error {
	dst := newRoot + m.Dst
	switch m.Kind {
	case MountBind:
		return b.bind(m, dst)
	case MountTmpfs:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		return unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
			fmt.Sprintf("mode=%o,size=%d", m.Mode, m.Size))
	case MountProc:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		return unix.Mount("proc", dst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	case MountDev:
		return b.dev(dst, m.Size)
	case MountOverlay:
		return b.overlay(m, dst)
	case MountSymlink:
		if err := os.MkdirAll(path.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(m.Target, dst); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		return nil
	case MountRebind:
		if _, err := os.Lstat(dst); err != nil {
			if m.Optional {
				return nil
			}
			return err
		}
		if err := unix.Mount(dst, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		return setAttr(dst, true, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	}
	return fmt.Errorf("unknown mount kind %q", m.Kind)
}

// bind shows a source (a detached mount lcp cloned, or a host path) at dst.
func (b *builder) bind(m Mount, dst string) error {
	if m.Fd >= 0 {
		defer unix.Close(m.Fd)
		if err := mountpoint(dst, m.File); err != nil {
			return err
		}
		return unix.MoveMount(m.Fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
	}
	src := oldRoot + m.Src
	if _, err := os.Stat(src); err != nil {
		if m.Optional {
			return nil
		}
		return err
	}
	if err := mountpoint(dst, m.File); err != nil {
		return err
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	attrs := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	if m.ReadOnly {
		attrs |= unix.MOUNT_ATTR_RDONLY
	}
	return setAttr(dst, true, attrs)
}

// dev builds a minimal /dev: the harmless character devices of the host,
// a private devpts and /dev/shm, and the usual links.
func (b *builder) dev(dst string, shmSize int64) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom"} {
		p := dst + "/" + n
		if err := mountpoint(p, true); err != nil {
			return err
		}
		if err := unix.Mount(oldRoot+"/dev/"+n, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
		if err := setAttr(p, false, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"} {
		if err := os.Symlink(target, dst+"/"+name); err != nil {
			return err
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(dst+"/"+d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", dst+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("devpts: %w", err)
	}
	if err := unix.Mount("tmpfs", dst+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
		fmt.Sprintf("mode=1777,size=%d", shmSize)); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	return setAttr(dst, false, unix.MOUNT_ATTR_RDONLY)
}

// overlay mounts a copy-on-write view of a source at dst. Its upper layer
// is a host folder (the workspace's change set, read by lcp afterwards)
// or a throwaway one in memory (caches).
func (b *builder) overlay(m Mount, dst string) error {
	lower := oldRoot + m.Src
	if m.Fd >= 0 {
		staged, err := b.stageFd(m.Fd)
		if err != nil {
			return err
		}
		lower = staged
	} else if _, err := os.Stat(lower); err != nil {
		if m.Optional {
			return nil
		}
		return err
	}
	var upper, work string
	switch {
	case m.UpperFd >= 0:
		staged, err := b.stageFd(m.UpperFd)
		if err != nil {
			return err
		}
		upper, work = staged+"/upper", staged+"/work"
	case m.Upper != "":
		upper, work = oldRoot+m.Upper+"/upper", oldRoot+m.Upper+"/work"
		if b.cfg.Layer != nil && !b.layerSent {
			if err := b.overlayOnLayer(lower, dst); err == nil {
				return nil
			}
			// The layer stays in the host folder: no disk total (lcp
			// sees that no descriptor came).
		}
	default:
		if err := b.scratchLayer(); err != nil {
			return b.fallback(m, lower, dst, err)
		}
		b.stageCount++
		d := fmt.Sprintf("%s/%d", scratch, b.stageCount)
		upper, work = d+"/upper", d+"/work"
		for _, p := range []string{upper, work} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := mountOverlayFS(lower, upper, work, dst); err != nil {
		return b.fallback(m, lower, dst, err)
	}
	return nil
}

// fallback shows a cache read-only when its throwaway layer fails; the
// workspace has no fallback.
func (b *builder) fallback(m Mount, lower, dst string, cause error) error {
	if !m.Fallback {
		return fmt.Errorf("overlay: %w", cause)
	}
	if err := unix.Mount(lower, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("overlay (%v), then bind: %w", cause, err)
	}
	b.warnings = append(b.warnings, fmt.Sprintf("%s is read-only (overlay: %v)", m.Dst, cause))
	return setAttr(dst, true, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
}

// scratchLayer mounts the memory for throwaway layers once.
func (b *builder) scratchLayer() error {
	if b.scratchUp {
		return nil
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
		fmt.Sprintf("mode=0755,size=%d", b.cfg.Limits.TmpSize)); err != nil {
		return err
	}
	b.scratchUp = true
	return nil
}

// stageFd attaches a detached mount beside the new root, for use as a
// layer.
func (b *builder) stageFd(fd int) (string, error) {
	defer unix.Close(fd)
	b.stageCount++
	p := fmt.Sprintf("%s/%d", stage, b.stageCount)
	if err := os.Mkdir(p, 0o755); err != nil {
		return "", err
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return "", err
	}
	return p, nil
}

// mountOverlayFS mounts an overlay with user xattrs (the only kind a user
// namespace may mount), through the new mount API so that paths need no
// escaping; kernels before 6.8 get the classic mount with escaped options.
func mountOverlayFS(lower, upper, work, dst string) error {
	fd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.FsconfigSetString(fd, "lowerdir+", lower); err != nil {
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,userxattr,volatile", escapeOverlay(lower), escapeOverlay(upper), escapeOverlay(work))
		return unix.Mount("overlay", dst, "overlay", 0, opts)
	}
	for _, kv := range [][2]string{{"upperdir", upper}, {"workdir", work}} {
		if err := unix.FsconfigSetString(fd, kv[0], kv[1]); err != nil {
			return fmt.Errorf("%s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigSetFlag(fd, "userxattr"); err != nil {
		return fmt.Errorf("userxattr: %w", err)
	}
	// The layers are read once, right after the run, on the same boot:
	// no sync of the upper filesystem when the sandbox ends (which would
	// hold the run up for a journal commit).
	if err := unix.FsconfigSetFlag(fd, "volatile"); err != nil {
		return fmt.Errorf("volatile: %w", err)
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return err
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	return unix.MoveMount(mfd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

func escapeOverlay(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`)
	return r.Replace(p)
}

// mountpoint makes sure dst exists as a folder, or as a file when file.
func mountpoint(dst string, file bool) error {
	if !file {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(path.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		if _, serr := os.Stat(dst); serr == nil {
			return nil
		}
		return err
	}
	return f.Close()
}

// setAttr sets mount attributes on the mount at path (and below it).
func setAttr(path string, recursive bool, attrs uint64) error {
	flags := 0
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	return unix.MountSetattr(unix.AT_FDCWD, path, uint(flags), &unix.MountAttr{Attr_set: attrs})
}

// loopbackUp brings up the loopback interface of the sandbox's own
// network namespace: servers and clients inside can talk to each other,
// nothing else.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// overlayOnLayer mounts the workspace's overlay with its upper and work
// folders in a tmpfs of the disk budget's size, made here (the init is
// root in the run's user namespace), and sends the tmpfs to lcp, which
// reads the changes through it after the run. Any failure undoes what
// it mounted: the caller falls back to the host folder.
func (b *builder) overlayOnLayer(lower, dst string) error {
	l := b.cfg.Layer
	mfd, err := layerTmpfs(l)
	if err != nil {
		return err
	}
	keep, err := unix.FcntlInt(uintptr(mfd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		unix.Close(mfd)
		return err
	}
	defer unix.Close(keep)
	staged, err := b.stageFd(mfd)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := mountOverlayFS(lower, staged+"/upper", staged+"/work", dst); err != nil {
		_ = unix.Unmount(staged, unix.MNT_DETACH)
		return err
	}
	rights := unix.UnixRights(keep)
	if err := unix.Sendmsg(l.Sock, []byte{1}, rights, nil, 0); err != nil {
		if uerr := unix.Unmount(dst, unix.MNT_DETACH); uerr != nil {
			return fmt.Errorf("send the layer (%v), then unmount: %w", err, uerr)
		}
		_ = unix.Unmount(staged, unix.MNT_DETACH)
		return err
	}
	b.layerSent = true
	return nil
}

// layerTmpfs makes the layer's tmpfs without a mount point, with its
// "upper" and "work" folders, and checks that it keeps the user extended
// attributes overlay needs in a user namespace (Linux 6.6 and later).
func layerTmpfs(l *Layer) (int, error) {
	if l.Refuse {
		return -1, errors.New("the layer's tmpfs is refused (test)")
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fsfd)
	for _, kv := range [][2]string{{"size", strconv.FormatInt(l.Size, 10)},
		{"nr_inodes", strconv.FormatInt(l.Inodes, 10)}, {"mode", "0700"}} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("tmpfs %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, err
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return -1, err
	}
	if err := layerFolders(mfd); err != nil {
		unix.Close(mfd)
		return -1, err
	}
	return mfd, nil
}

// layerFolders makes "upper" and "work" in the layer's root and probes a
// user extended attribute on "work".
func layerFolders(mfd int) error {
	for _, d := range []string{"upper", "work"} {
		if err := unix.Mkdirat(mfd, d, 0o700); err != nil {
			return err
		}
	}
	fd, err := unix.Openat(mfd, "work", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fsetxattr(fd, "user.lcp.probe", []byte("1"), 0); err != nil {
		return fmt.Errorf("user extended attributes: %w", err)
	}
	return unix.Fremovexattr(fd, "user.lcp.probe")
}
