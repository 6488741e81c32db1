package pyrisk

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSnippets(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "snippets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		expect, quoted, ok := strings.Cut(text, "\t")
		if !ok {
			t.Fatalf("snippets.txt:%d: no tab", line)
		}
		code, err := strconv.Unquote(quoted)
		if err != nil {
			t.Fatalf("snippets.txt:%d: %v", line, err)
		}
		counts[expect]++
		v := Classify(code, nil)
		if want := expect != "run"; v.Risky != want {
			t.Errorf("snippets.txt:%d: Classify(%q) risky = %v %q, want %v", line, code, v.Risky, v.Reasons, want)
		}
		if v.Risky && len(v.Reasons) == 0 {
			t.Errorf("snippets.txt:%d: risky without a reason", line)
		}
	}
	benign := counts["run"] + counts["fp"]
	if counts["ask"] < 30 || benign < 30 {
		t.Errorf("corpus has %d risky and %d benign snippets, want at least 30 each", counts["ask"], benign)
	}
	t.Logf("snippets: %d risky (all asked), %d benign of which %d asked (%.1f%% false positives)",
		counts["ask"], benign, counts["fp"], 100*float64(counts["fp"])/float64(benign))
}

func TestReasons(t *testing.T) {
	tests := []struct {
		code string
		want []string
	}{
		{"import subprocess", []string{"line 1: imports subprocess, which runs other programs"}},
		{"x = 1\nimport os as o\no.system('id')", []string{"line 3: uses os.system, which runs a shell"}},
		{"exec('import pty')", []string{"exec string at line 1, line 1: imports pty, which spawns programs on a terminal"}},
		{"exec(x)", []string{"line 1: exec of a computed string runs code that is not judged"}},
		{"def f(:\n", []string{"the code cannot be parsed (1:6: '(' was never closed)"}},
	}
	for _, tt := range tests {
		v := Classify(tt.code, nil)
		if strings.Join(v.Reasons, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("Classify(%q).Reasons = %q, want %q", tt.code, v.Reasons, tt.want)
		}
	}
}

func TestLocalModules(t *testing.T) {
	files := map[string]string{
		"helper":    "import subprocess\n",
		"pkg":       "",
		"pkg.inner": "from . import deep\n",
		"deep":      "import os\nos.system('x')\n",
		"clean":     "import json\n",
		"loop":      "import loop\n",
		"layer1":    "import layer2\n",
		"layer2":    "exec('import layer3')\n",
		"layer3":    "import ctypes\n",
	}
	opts := &Options{Module: func(name string) ([]byte, bool) {
		src, ok := files[name]
		return []byte(src), ok
	}}
	tests := []struct {
		code  string
		risky bool
	}{
		{"import helper", true},
		{"from pkg.inner import thing", true},
		{"import clean\nimport loop", false},
		{"import layer1", true},
		{"import json", false},
	}
	for _, tt := range tests {
		if v := Classify(tt.code, opts); v.Risky != tt.risky {
			t.Errorf("Classify(%q) risky = %v %q, want %v", tt.code, v.Risky, v.Reasons, tt.risky)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	code := "x = 1"
	for range MaxDepth + 2 {
		code = fmt.Sprintf("exec(%q)", code)
	}
	if v := Classify(code, nil); !v.Risky {
		t.Errorf("deeply nested exec runs without asking")
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"import os\nos.system('x')", "exec('exec(1)')", "from . import x", "getattr(os, x)",
		"import a.b.c as d\nd.e", "[c for c in ().__class__.__subclasses__()]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		v := Classify(code, &Options{Module: func(name string) ([]byte, bool) { return []byte(code), name == "self" }})
		if v.Risky && len(v.Reasons) == 0 {
			t.Fatalf("risky without a reason: %q", code)
		}
	})
}

func TestNeedsAndWrites(t *testing.T) {
	tests := []struct {
		code   string
		needs  string // kinds and paths of Needs, joined
		writes bool
	}{
		{"import requests\nrequests.get('https://example.com')", "network", false},
		{"import pandas as pd\npd.read_csv('https://example.com/d.csv')", "network", false},
		{"import socket\nsocket.create_connection(('example.com', 80))", "network", false},
		{"print('https://example.com')", "", false},
		{"open('/etc/x', 'w').write('y')", "write:/etc/x", true},
		{"open('/ws/a.txt', 'w').write('y')", "", true},
		{"open('/tmp/a', 'w')", "", true},
		{"print(open('a.txt').read())", "", false},
		{"import pandas as pd\npd.DataFrame().to_csv('out.csv')", "", true},
		{"import os\nos.remove('x')", "", true},
		{"from pathlib import Path\nPath('/home/u/.bashrc').write_text('x')", "write:/home/u/.bashrc", true},
		{"import shutil\nshutil.copy('a', '/usr/local/bin/a')", "write:/usr/local/bin/a", true},
		{"f = open(name, mode)", "", true},
	}
	for _, tt := range tests {
		v := Classify(tt.code, &Options{Workspace: "/ws"})
		var needs []string
		for _, n := range v.Needs {
			s := string(n.Kind)
			if n.Path != "" {
				s += ":" + n.Path
			}
			needs = append(needs, s)
		}
		if got := strings.Join(needs, " "); got != tt.needs || (len(v.Writes) > 0) != tt.writes {
			t.Errorf("Classify(%q): needs %q writes %q, want %q and writes=%v", tt.code, got, v.Writes, tt.needs, tt.writes)
		}
	}
}

// TestReason: the per-path judgement agrees with Classify's reasons.
func TestReason(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"subprocess.run", "which runs other programs"},
		{"subprocess", "which runs other programs"},
		{"os.system", "which runs a shell"},
		{"os.execv", "which runs other programs"},
		{"pickle.loads", "which can run any code while deserializing"},
		{"os.path.join", ""},
		{"json.loads", ""},
		{"builtins.__import__", ""},
		{"", ""},
	} {
		if got := Reason(c.path); got != c.want {
			t.Errorf("Reason(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}
