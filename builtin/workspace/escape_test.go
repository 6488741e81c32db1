//go:build unix

package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeFixture builds tmp/outside (files that must never be read or
// changed) and tmp/ws (the workspace) with links that lead out.
type escapeFixture struct {
	tmp, ws, outside string
}

func newEscapeFixture(t testing.TB) escapeFixture {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := escapeFixture{tmp: tmp, ws: filepath.Join(tmp, "ws"), outside: filepath.Join(tmp, "outside")}
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(f.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(f.outside)
	mkdir(filepath.Join(f.ws, "sub", "deep"))
	write(filepath.Join(f.outside, "secret.txt"), "SECRET")
	write(filepath.Join(f.ws, "sub", "ok.txt"), "fine")
	link("/", "link_root")
	link("../outside", "link_up")
	link("chain2", "chain1")
	link("chain3", "chain2")
	link("../outside", "chain3")
	link("../..", "sub/up")
	link("sub/deep", "inner")
	link(filepath.Join(f.ws, "sub"), "abs_inner")
	link("loop2", "loop1")
	link("loop1", "loop2")
	link("/proc/self/root", "proc")
	link("/dev/null", "dev_null")
	link("../outside/secret.txt", "secret_link")
	link("../outside/missing.txt", "dangling_out")
	if err := os.Link(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.ws, "hard.txt")); err != nil {
		t.Logf("no hard link: %v", err)
	}
	if err := mkfifo(filepath.Join(f.ws, "fifo")); err != nil {
		t.Logf("no fifo: %v", err)
	}
	return f
}

// snapshot records every file below dir with its content.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		} else {
			m[p] = d.Type().String()
		}
		return nil
	})
	return m
}

// TestEscapeCorpus tries to read and write outside the workspace with
// every trick in the list; none may succeed. Writes only ever target
// files under the test's own directory (the tests may run as root).
func TestEscapeCorpus(t *testing.T) {
	f := newEscapeFixture(t)
	w, err := Open(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	outsideBefore := snapshot(t, f.outside)
	tmpEntries, _ := os.ReadDir(f.tmp)

	r := strings.NewReplacer("{ws}", f.ws, "{tmp}", f.tmp)
	tests := []struct {
		name string
		// want is the error every operation must give; nil means the
		// name is inside (an odd but legal name) and only the invariants
		// are checked.
		want  error
		write bool // also try writing and appending (targets under {tmp} only)
	}{
		{"../outside/secret.txt", ErrOutside, true},
		{"../../etc/passwd", ErrOutside, false},
		{"/etc/passwd", ErrOutside, false},
		{"//etc/passwd", ErrOutside, false},
		{"/", ErrOutside, false},
		{"{tmp}/outside/secret.txt", ErrOutside, true},
		{"{ws}/../outside/secret.txt", ErrOutside, true},
		{"{tmp}/ws/../outside/secret.txt", ErrOutside, true},
		{"./../outside/secret.txt", ErrOutside, true},
		{"sub/../../outside/secret.txt", ErrOutside, true},
		{"sub/./../../outside/secret.txt", ErrOutside, true},
		{"../ws/../outside/secret.txt", ErrOutside, true},
		{"new/../../outside/new.txt", ErrOutside, true},
		{"link_root/etc/passwd", ErrOutside, false},
		{"link_root", ErrOutside, false},
		{"link_up/secret.txt", ErrOutside, true},
		{"link_up/new.txt", ErrOutside, true},
		{"link_up/../outside/secret.txt", ErrOutside, true},
		{"{ws}/link_up/secret.txt", ErrOutside, true},
		{"chain1/secret.txt", ErrOutside, true},
		{"chain1/new.txt", ErrOutside, true},
		{"sub/up/outside/secret.txt", ErrOutside, true},
		{"sub/up/outside/new.txt", ErrOutside, true},
		{"sub/up", ErrOutside, false},
		{"inner/../../../outside/secret.txt", ErrOutside, true},
		{"inner/../../outside/secret.txt", ErrOutside, true},
		{"secret_link", ErrOutside, true},
		{"dangling_out", ErrOutside, true},
		{"abs_inner/ok.txt", ErrOutside, false}, // absolute links are refused even when they point inside
		{"/proc/self/root/etc/passwd", ErrOutside, false},
		{"/proc/self/cwd/../outside/secret.txt", ErrOutside, false},
		{"proc/etc/passwd", ErrOutside, false},
		{"dev_null", ErrOutside, false},
		{"loop1", nil, false},
		{"secret.txt\x00.txt", ErrBadName, true},
		{"../outside/secret.txt\x00", ErrBadName, true},
		{"", ErrBadName, false},
		{"~", ErrOutside, false},
		{"~/secret.txt", ErrOutside, true},
		// Look-alikes are ordinary names inside the workspace.
		{"．．/outside/secret.txt", nil, true},     // fullwidth full stops
		{"..∕outside∕secret.txt", nil, true},     // division slash
		{"..\\outside\\secret.txt", nil, true},   // backslashes are not separators here
		{"%2e%2e/outside/secret.txt", nil, true}, // URL encoding is not decoded
		{"....//outside/secret.txt", nil, true},
		{"\u202e..\u202d/outside/secret.txt", nil, true}, // bidi overrides
		{".. /outside/secret.txt", nil, true},
		{"...", nil, true},
		{"hard.txt", ErrHardLinked, false},
		{"fifo", ErrNotRegular, false},
	}
	if len(tests) < 40 {
		t.Fatalf("corpus has %d attempts, want at least 40", len(tests))
	}
	for _, tt := range tests {
		name := r.Replace(tt.name)
		t.Run(strings.ReplaceAll(tt.name, "/", "_"), func(t *testing.T) {
			check := func(op string, err error) {
				t.Helper()
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("%s(%q) error = %v, want %v", op, name, err, tt.want)
				}
			}
			data, err := w.ReadFile(name, 1<<20)
			if bytes.Contains(data, []byte("SECRET")) || bytes.Contains(data, []byte("root:")) {
				t.Fatalf("ReadFile(%q) read outside content %q", name, data)
			}
			check("ReadFile", err)
			if tt.want != ErrHardLinked && tt.want != ErrNotRegular {
				_, err = w.Stat(name)
				check("Stat", err)
				_, err = w.ReadDir(name)
				if tt.want == ErrOutside || tt.want == ErrBadName {
					check("ReadDir", err)
				}
			}
			if tt.write {
				err = w.WriteFile(name, []byte("PWNED"))
				check("WriteFile", err)
				err = w.AppendFile(name, []byte("PWNED"))
				check("AppendFile", err)
			}
		})
	}
	if after := snapshot(t, f.outside); !mapsEqual(after, outsideBefore) {
		t.Errorf("outside directory changed:\nbefore %v\nafter  %v", outsideBefore, after)
	}
	if after, _ := os.ReadDir(f.tmp); len(after) != len(tmpEntries) {
		t.Errorf("entries next to the workspace changed: %d, then %d", len(tmpEntries), len(after))
	}
	// Appending to the hard link must not have changed the outside file.
	if err := w.AppendFile("hard.txt", []byte("PWNED")); !errors.Is(err, ErrHardLinked) {
		t.Errorf("AppendFile(hard.txt) = %v, want ErrHardLinked", err)
	}
	// Writing replaces the link: the workspace gets its own file and the
	// outside file keeps its content.
	if err := w.WriteFile("hard.txt", []byte("mine")); err != nil {
		t.Errorf("WriteFile(hard.txt) = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret.txt")); string(b) != "SECRET" {
		t.Errorf("outside file changed through a hard link: %q", b)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// FuzzNames feeds arbitrary names to every operation of a workspace with
// escape links: nothing outside may be read or changed, and nothing may
// panic.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"a.txt", "../outside/secret.txt", "link_up/x", "sub/up/outside/secret.txt", "/etc/passwd", "x\x00y", "~/x", "chain1/../secret_link"} {
		f.Add(s)
	}
	fx := newEscapeFixture(f)
	w, err := Open(fx.ws)
	if err != nil {
		f.Fatal(err)
	}
	defer w.Close()
	f.Fuzz(func(t *testing.T, name string) {
		if data, _ := w.ReadFile(name, 1<<16); bytes.Contains(data, []byte("SECRET")) {
			t.Fatalf("ReadFile(%q) read outside content", name)
		}
		w.Stat(name)
		w.ReadDir(name)
		w.Rel(name)
		w.WriteFile(name, []byte("x"))
		w.AppendFile(name, []byte("x"))
		if b, _ := os.ReadFile(filepath.Join(fx.outside, "secret.txt")); string(b) != "SECRET" {
			t.Fatalf("outside file changed through %q", name)
		}
		if entries, _ := os.ReadDir(fx.outside); len(entries) != 1 {
			t.Fatalf("a file was created outside through %q", name)
		}
	})
}
