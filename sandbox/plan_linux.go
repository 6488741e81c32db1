package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// systemDirs are shown read-only at their own paths (or recreated as the
// same symbolic links, on merged-/usr systems).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/snap", "/nix"}

type plannedMount struct {
	mountEntry
	file  *os.File // detached mount of the source (lcp is root)
	upper *os.File // detached mount of the upper folder (lcp is root)
	drop  bool     // an optional source lcp could not clone
}

type mountPlan struct {
	mounts    []plannedMount
	readOnly  []string // Landlock: read and execute
	readWrite []string // Landlock: read, write, execute
}

func (p *mountPlan) add(m mountEntry) *plannedMount {
	m.Fd, m.UpperFd = -1, -1
	p.mounts = append(p.mounts, plannedMount{mountEntry: m})
	return &p.mounts[len(p.mounts)-1]
}

// plan builds the mount plan of the run: the system read-only, a private
// /dev, /proc, /tmp and home, the caches, the extra paths and the
// workspace. When lcp is root it clones every source itself (the sandbox's
// user may not be able to reach them) and hands the clones over.
func (b *Box) plan() (*mountPlan, error) {
	pol := &b.policy
	p := &mountPlan{readOnly: []string{"/"}, readWrite: []string{"/tmp", "/dev/shm", "/dev/pts"}}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				p.add(mountEntry{Kind: mountSymlink, Dst: d, Target: t})
			}
		case fi.IsDir():
			p.add(mountEntry{Kind: mountBind, Dst: d, Src: d, ReadOnly: true})
		}
	}
	p.add(mountEntry{Kind: mountDev, Dst: "/dev", Size: pol.Limits.TmpSize})
	p.add(mountEntry{Kind: mountProc, Dst: "/proc"})
	p.add(mountEntry{Kind: mountTmpfs, Dst: "/tmp", Size: pol.Limits.TmpSize, Mode: 0o1777})
	p.add(mountEntry{Kind: mountSymlink, Dst: "/var/tmp", Target: "../tmp"})

	home := pol.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home = cleanAbs(home); home != "" && home != "/" && !underSystem(home) {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			p.add(mountEntry{Kind: mountTmpfs, Dst: home, Size: pol.Limits.TmpSize, Mode: 0o700})
			p.readWrite = append(p.readWrite, home)
		}
	}
	for _, r := range pol.ReadPaths {
		r = cleanAbs(r)
		if r == "" || underSystem(r) || within(r, pol.Workspace) {
			continue // already shown
		}
		if fi, err := os.Stat(r); err == nil {
			p.add(mountEntry{Kind: mountBind, Dst: r, Src: r, ReadOnly: true, Optional: true, File: !fi.IsDir()})
		}
	}
	for _, c := range pol.Caches {
		c = cleanAbs(c)
		if fi, err := os.Stat(c); c != "" && err == nil && fi.IsDir() && !within(c, pol.Workspace) {
			p.add(mountEntry{Kind: mountOverlay, Dst: c, Src: c, Optional: true, Fallback: true})
			p.readWrite = append(p.readWrite, c)
		}
	}
	for _, w := range pol.WritePaths {
		w = existingParent(cleanAbs(w))
		if w == "" || w == "/" {
			continue
		}
		fi, err := os.Stat(w)
		if err != nil {
			continue
		}
		p.add(mountEntry{Kind: mountBind, Dst: w, Src: w, File: !fi.IsDir()})
		p.readWrite = append(p.readWrite, w)
	}
	if err := b.planWorkspace(p); err != nil {
		return nil, err
	}
	if pol.Network {
		planResolver(p)
	}
	slices.SortStableFunc(p.mounts, func(a, b plannedMount) int { return comparePaths(a.Dst, b.Dst) })
	if b.id.root {
		if err := b.cloneSources(p); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

func (b *Box) planWorkspace(p *mountPlan) error {
	pol := &b.policy
	ws := pol.Workspace
	switch pol.Mode {
	case CopyOnWrite:
		p.add(mountEntry{Kind: mountOverlay, Dst: ws, Src: ws, Upper: b.tmp})
		p.readWrite = append(p.readWrite, ws)
	case Write:
		p.add(mountEntry{Kind: mountBind, Dst: ws, Src: ws})
		p.readWrite = append(p.readWrite, ws)
		if !pol.WritableVCS {
			paths, known, err := vcsPaths(ws)
			if err != nil {
				return err
			}
			b.knownGitDirs = known
			for _, d := range paths {
				p.add(mountEntry{Kind: mountRebind, Dst: d.Path, Optional: true})
				b.keptReadOnly = append(b.keptReadOnly, relLine(ws, d))
			}
		} else if known, err := gitDirs(ws); err == nil {
			// Writable version control still does not let a repository
			// the run creates keep hooks (newrepos.go). A configuration
			// lcp cannot parse leaves the set unknown: nothing is moved.
			b.knownGitDirs = known
		}
	default:
		p.add(mountEntry{Kind: mountBind, Dst: ws, Src: ws, ReadOnly: true})
	}
	return nil
}

// vcsPaths lists what a Write run must not change: the version control
// folders of the workspace and what git runs or loads from its
// repositories (gitPaths). For a path git would use that does not exist
// yet (an include target, a program), the first missing part of it is
// created empty (a file when it is the path itself, else a folder), so
// that it can be shown read-only: git reads an empty include as no
// configuration and cannot run an empty program.
// It also returns the git dirs found.
func vcsPaths(ws string) ([]gitPath, map[string]bool, error) {
	var out []gitPath
	for _, d := range VCSDirs {
		if _, err := os.Lstat(filepath.Join(ws, d)); err == nil {
			out = append(out, gitPath{Path: filepath.Join(ws, d), Why: "a version control folder"})
		}
	}
	finder, err := findGit(ws)
	if err != nil {
		return nil, nil, err
	}
	for _, g := range finder.out {
		if slices.ContainsFunc(out, func(q gitPath) bool { return within(g.Path, q.Path) }) {
			continue
		}
		p, err := placeholder(ws, g.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: %s (%s) cannot be kept read-only: %w", g.Path, g.Why, err)
		}
		out = append(out, gitPath{Path: p, Why: g.Why})
	}
	return out, finder.gitDirSet(), nil
}

// placeholder returns the part of p, inside ws, to show read-only: p when
// it exists, else its first missing part, created empty.
func placeholder(ws, p string) (string, error) {
	missing := p
	for {
		_, err := os.Lstat(missing)
		if err == nil {
			return missing, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(missing)
		if _, err := os.Lstat(parent); err == nil {
			break
		}
		if parent == ws || !within(parent, ws) {
			return "", fmt.Errorf("the workspace does not exist")
		}
		missing = parent
	}
	if missing != p {
		return missing, os.Mkdir(missing, 0o755)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	return p, f.Close()
}

// planResolver shows the target of /etc/resolv.conf when it is a link out
// of /etc (systemd-resolved's stub in /run): with the network, DNS works.
func planResolver(p *mountPlan) {
	t, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil || within(t, "/etc") || underSystem(t) {
		return
	}
	if dst, err := os.Readlink("/etc/resolv.conf"); err == nil && filepath.IsAbs(dst) {
		p.add(mountEntry{Kind: mountBind, Dst: filepath.Clean(dst), Src: t, ReadOnly: true, File: true, Optional: true})
	}
}

// cloneSources clones, as lcp, every source the init attaches: detached
// mounts with their final attributes (read-only, no set-uid, no devices,
// and an idmap that shows the owner's files as the sandbox user's where
// they differ).
func (b *Box) cloneSources(p *mountPlan) error {
	for i := range p.mounts {
		m := &p.mounts[i]
		switch m.Kind {
		case mountBind, mountOverlay:
		default:
			continue
		}
		if m.Src == "" {
			continue
		}
		ro := m.ReadOnly || m.Kind == mountOverlay
		// The workspace, the caches and what the run may write are shown
		// as the sandbox user's own; the system keeps its owners.
		ws := m.Src == b.policy.Workspace
		own := ws || m.Kind == mountOverlay || !m.ReadOnly
		f, err := b.clone(m.Src, ro, own, ws)
		if err != nil {
			if m.Optional {
				m.drop = true
				continue
			}
			return fmt.Errorf("%s: %w", m.Src, err)
		}
		m.file = f
		if m.Kind == mountOverlay && m.Upper != "" && b.layerRoot != "" {
			u, err := b.layerHandOver()
			if err != nil {
				return fmt.Errorf("copy-on-write layer: %w", err)
			}
			m.upper = u
		} else if m.Kind == mountOverlay && m.Upper != "" {
			u, err := b.clone(m.Upper, false, false, false)
			if err != nil {
				return fmt.Errorf("%s: %w", m.Upper, err)
			}
			m.upper = u
		}
	}
	p.mounts = slices.DeleteFunc(p.mounts, func(m plannedMount) bool { return m.drop })
	return nil
}

// clone returns a detached recursive clone of path. ro makes it read-only;
// own shows files of path's owner as the sandbox user's (an idmapped
// mount) when they differ; strict fails when that idmap is refused (the
// workspace), instead of going on without it (caches).
func (b *Box) clone(path string, ro, own, strict bool) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, err
	}
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
	idmap := own && (int(st.Uid) != b.id.hostUID || int(st.Gid) != b.id.hostGID)
	if !idmap {
		// Idmaps cannot be applied to a tree with submounts of other
		// filesystems; without one the whole tree comes along.
		flags |= unix.AT_RECURSIVE
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, flags)
	if err != nil {
		return nil, fmt.Errorf("open_tree: %w", err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if ro {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	setFlags := uint(unix.AT_EMPTY_PATH)
	if flags&unix.AT_RECURSIVE != 0 {
		setFlags |= unix.AT_RECURSIVE
	}
	if err := unix.MountSetattr(fd, "", setFlags, attr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mount_setattr: %w", err)
	}
	if idmap {
		ns, err := idmapUserns(int(st.Uid), int(st.Gid), b.id.hostUID, b.id.hostGID)
		if err == nil {
			err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns)})
		}
		if err != nil && strict {
			unix.Close(fd)
			return nil, fmt.Errorf("%w: the workspace belongs to uid %d and the sandbox runs as uid %d; showing its files as the sandbox's needs an idmapped mount, which this filesystem refuses (%v)",
				ErrUnsupported, st.Uid, b.id.hostUID, err)
		}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func (p *mountPlan) close() {
	for _, m := range p.mounts {
		if m.file != nil {
			m.file.Close()
		}
		if m.upper != nil {
			m.upper.Close()
		}
	}
}

// cleanAbs cleans an absolute path; "" for a relative or empty one.
func cleanAbs(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

func underSystem(p string) bool {
	for _, d := range systemDirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// existingParent returns p when it exists, else its nearest existing
// parent: a write escalation for a file yet to be created shows its
// folder.
func existingParent(p string) string {
	for p != "" && p != "/" {
		if _, err := os.Lstat(p); err == nil {
			return p
		} else if !errors.Is(err, os.ErrNotExist) {
			return ""
		}
		p = filepath.Dir(p)
	}
	return p
}
