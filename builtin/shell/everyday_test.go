package shell

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcptools/lcp/sandbox"
)

// fakePython proves harmless exactly the code "print(1)".
func fakePython(code, dir string) []string {
	if code == "print(1)\n" || code == "print(1)" {
		return nil
	}
	return []string{"not print(1)"}
}

func TestPythonProven(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		cmd   string
		want  Decision
	}{
		{"-c judged harmless", nil, "python3 -c 'print(1)'", Run},
		{"-c with flags", nil, "python3 -u -B -c 'print(1)'", Run},
		{"-c judged risky", nil, "python3 -c 'print(2)'", Ask},
		{"script judged harmless", map[string]string{"s.py": "print(1)\n"}, "python3 s.py", Run},
		{"script judged risky", map[string]string{"s.py": "print(2)\n"}, "python3 s.py", Ask},
		{"missing script", nil, "python3 nothere.py", Ask},
		{"script outside", nil, "python3 /etc/x.py", Ask},
		{"module", nil, "python3 -m json.tool", Ask},
		{"stdin", nil, "python3", Ask},
		{"shadowing module", map[string]string{"json.py": ""}, "python3 -c 'print(1)'", Ask},
		{"shadowing package", map[string]string{"re/__init__.py": ""}, "python3 -c 'print(1)'", Ask},
		{"shadowing sourceless", map[string]string{"os.pyc": ""}, "python3 -c 'print(1)'", Ask},
		{"shadowing extension", map[string]string{"ssl.cpython-311-x86_64-linux-gnu.so": ""}, "python3 -c 'print(1)'", Ask},
		{"sitecustomize", map[string]string{"sitecustomize.py": ""}, "python3 -c 'print(1)'", Ask},
		{"shadow beside the script", map[string]string{"sub/s.py": "print(1)\n", "sub/json.py": ""}, "python3 sub/s.py", Ask},
		{"unrelated files", map[string]string{"mytool.py": "", "data/x.csv": ""}, "python3 -c 'print(1)'", Run},
		{"namespace folder named like a standard package", map[string]string{"json/tool.py": ""}, "python3 -c 'print(1)'", Run},
		{"file named like a module, not importable", map[string]string{"json.txt": "", "re.py.bak": ""}, "python3 -c 'print(1)'", Run},
		{"computed code", nil, "python3 -c \"$CODE\"", Ask},
		{"after cd", nil, "cd /tmp && python3 -c 'print(1)'", Ask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(ws, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v := Classify(tc.cmd, &Options{Workspace: ws, Home: t.TempDir(), Python: fakePython})
			if v.Decision != tc.want {
				t.Errorf("%s: %v %v, want %v", tc.cmd, v.Decision, v.Reasons, tc.want)
			}
		})
	}
	// A PYTHONPATH folder in the workspace is searched before the
	// standard library too.
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "lib", "queue.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", "lib")
	if v := Classify("python3 -c 'print(1)'", &Options{Workspace: ws, Home: t.TempDir(), Python: fakePython}); v.Decision != Ask {
		t.Errorf("shadow in a PYTHONPATH folder: %v", v.Decision)
	}
	t.Setenv("PYTHONPATH", "")
	if v := Classify("python3 -c 'print(1)'", &Options{Workspace: ws, Home: t.TempDir(), Python: fakePython}); v.Decision != Run {
		t.Errorf("shadow in a folder off the path: %v %v", v.Decision, v.Reasons)
	}
	// Without a judge, Python asks.
	if v := Classify("python3 -c 'print(1)'", &Options{Workspace: t.TempDir()}); v.Decision != Ask {
		t.Errorf("no judge: %v", v.Decision)
	}
}

func TestMakeProven(t *testing.T) {
	tests := []struct {
		name     string
		makefile string
		files    []string
		cmd      string
		want     Decision
	}{
		{"echo target", "hello:\n\t@echo hello\n", nil, "make hello", Run},
		{"default target", "hello:\n\t@echo hello\nclean:\n\trm -rf x\n", nil, "make", Run},
		{"default is the first", "clean:\n\trm -rf x\nhello:\n\t@echo hello\n", nil, "make", Ask},
		{"silent, dry run", "hello:\n\techo hello\n", nil, "make -s -n hello", Run},
		{"prerequisite target", "all: a b\na:\n\techo a\nb:\n\techo b > new.txt\n.PHONY: all a b\n", nil, "make", Run},
		{"prerequisite runs something", "all: a\na:\n\tcurl http://x\n", nil, "make all", Ask},
		{"existing leaf", "out.txt: in.txt\n\tcat in.txt\n", []string{"in.txt"}, "make", Run},
		{"leaf an implicit rule could remake", "prog: prog.c\n\tcat prog.c\n", []string{"prog.c", "prog.y"}, "make", Ask},
		{"missing leaf", "out: in.txt\n\tcat in.txt\n", nil, "make", Ask},
		{"target without a rule", "hello:\n\techo hi\n", nil, "make other", Ask},
		{"variables", "CC = gcc\nhello:\n\techo $(CC)\n", nil, "make hello", Ask},
		{"shell function", "X := $(shell id)\nhello:\n\techo hi\n", nil, "make hello", Ask},
		{"doubled dollar", "hello:\n\techo $$HOME\n", nil, "make hello", Run},
		{"include", "include other.mk\nhello:\n\techo hi\n", nil, "make hello", Ask},
		{"pattern rule", "%.o: %.c\n\tcc -c $<\nhello:\n\techo hi\n", nil, "make hello", Ask},
		{"double colon", "hello::\n\techo hi\n", nil, "make hello", Ask},
		{"default rule", ".DEFAULT:\n\trm -rf x\nhello:\n\techo hi\n", nil, "make hello", Ask},
		{"inline recipe", "hello: ; echo hi\n", nil, "make hello", Run},
		{"variable override", "hello:\n\techo hi\n", nil, "make hello X=1", Ask},
		{"other makefile", "hello:\n\techo hi\n", nil, "make -f other.mk hello", Ask},
		{"recursion", "a:\n\tmake a\n", nil, "make a", Ask},
		{"recipe writes an existing file", "hello:\n\techo hi > Makefile\n", nil, "make hello", Ask},
		{"continuation", "hello:\n\techo hi \\\n\t  there\n", nil, "make hello", Run},
		{"makefile an implicit rule could remake", "hello:\n\techo hi\n", []string{"Makefile.o"}, "make hello", Ask},
		{"makefile under RCS", "hello:\n\techo hi\n", []string{"Makefile,v"}, "make hello", Ask},
		{"recipe before a rule", "\techo hi\nhello:\n\techo hi\n", nil, "make hello", Ask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "Makefile"), []byte(tc.makefile), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v := Classify(tc.cmd, &Options{Workspace: ws, Home: t.TempDir()})
			if v.Decision != tc.want {
				t.Errorf("%s with %q: %v %v, want %v", tc.cmd, tc.makefile, v.Decision, v.Reasons, tc.want)
			}
		})
	}
	if v := Classify("make", &Options{Workspace: t.TempDir()}); v.Decision != Ask {
		t.Errorf("no makefile: %v", v.Decision)
	}
}

func TestGitAddNeedsVCSInASandbox(t *testing.T) {
	ws, home := testWorkspace(t)
	v := Classify("git add -A", &Options{Workspace: ws, Home: home})
	if v.Decision != Run || len(v.Needs) != 1 || v.Needs[0].Kind != sandbox.WriteVCS {
		t.Errorf("git add: %+v", v)
	}
}
