package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitTestWorkspace builds a workspace with every way git finds a
// repository and what it runs, and returns it.
func gitTestWorkspace(t *testing.T) string {
	ws := t.TempDir()
	// The top repository: hooksPath, a missing include, an includeIf and
	// an fsmonitor inside the workspace.
	writeTestFile(t, filepath.Join(ws, ".git", "config"), `[core]
	hooksPath = .githooks
	fsmonitor = ./tools/fsm.sh
[include]
	path = ../conf/missing.inc
[includeIf "gitdir:/"]
	path = ../conf/extra.inc
`)
	writeTestFile(t, filepath.Join(ws, "conf", "extra.inc"), "[core]\n\tpager = \"scripts/pager\" -R\n")
	// A nested repository.
	writeTestFile(t, filepath.Join(ws, "sub", ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	// A separate git dir (git init --separate-git-dir=.bare).
	writeTestFile(t, filepath.Join(ws, "sep", ".git"), "gitdir: ../.bare\n")
	writeTestFile(t, filepath.Join(ws, ".bare", "config"), "[filter \"x\"]\n\tsmudge = ./smudge.sh\n")
	// A worktree whose git dir lives in the top repository.
	writeTestFile(t, filepath.Join(ws, "wt", ".git"), "gitdir: "+filepath.Join(ws, ".git", "worktrees", "wt")+"\n")
	writeTestFile(t, filepath.Join(ws, ".git", "worktrees", "wt", "commondir"), "../..\n")
	writeTestFile(t, filepath.Join(ws, ".git", "worktrees", "wt", "config.worktree"), "[core]\n\thooksPath = wthooks\n")
	return ws
}

func TestGitPaths(t *testing.T) {
	ws := gitTestWorkspace(t)
	got, err := gitPaths(ws)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range got {
		if g.Why == "" {
			t.Errorf("%s without a reason", g.Path)
		}
		rel, _ := filepath.Rel(ws, g.Path)
		paths = append(paths, filepath.ToSlash(rel))
	}
	for _, want := range []string{
		".git", ".githooks", "tools/fsm.sh", "conf/missing.inc", "conf/extra.inc", "scripts/pager",
		"sub/.git", "sep/.git", ".bare", "sep/smudge.sh", "wt/.git", ".git/worktrees/wt", "wt/wthooks",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("%s is not protected; got %q", want, paths)
		}
	}
}

func TestGitPathsBadConfig(t *testing.T) {
	ws := t.TempDir()
	cfg := filepath.Join(ws, "sub", ".git", "config")
	writeTestFile(t, cfg, "[core\n\thooksPath = x\n")
	_, err := gitPaths(ws)
	if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("error = %v, want one naming %s and the line", err, cfg)
	}
	// In a change set, every change then asks, with that reason.
	cs := &ChangeSet{Workspace: ws, Changes: []Change{{Path: "new.txt", Kind: Added, Type: "file"}}}
	cs.classify()
	if !cs.Changes[0].Risky || !strings.Contains(cs.Changes[0].Why, cfg) {
		t.Fatalf("change %+v: want risky, naming %s", cs.Changes[0], cfg)
	}
}

func TestClassifyGitPaths(t *testing.T) {
	ws := gitTestWorkspace(t)
	cs := &ChangeSet{Workspace: ws}
	for _, p := range []string{".githooks/pre-commit", "tools/fsm.sh", "conf/missing.inc", ".bare/hooks/post-checkout", "sep/smudge.sh", "wt/wthooks/pre-push", "scripts/pager"} {
		cs.Changes = append(cs.Changes, Change{Path: p, Kind: Added, Type: "file"})
	}
	cs.Changes = append(cs.Changes, Change{Path: "notes.txt", Kind: Added, Type: "file"})
	cs.classify()
	for _, c := range cs.Changes {
		if want := c.Path != "notes.txt"; c.Risky != want {
			t.Errorf("%s: risky = %v (%q), want %v", c.Path, c.Risky, c.Why, want)
		}
	}
}
