package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type corpusCase struct {
	line    int
	expect  string // run, ask, fp
	command string
}

func readCorpus(t *testing.T, name string) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		expect, cmd, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s:%d: no tab", name, n)
		}
		if strings.HasPrefix(cmd, `"`) {
			cmd, err = strconv.Unquote(cmd)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
		}
		cases = append(cases, corpusCase{n, expect, cmd})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// testWorkspace makes a workspace with a src directory, a .git directory
// and a symbolic link "out" that points outside it.
func testWorkspace(t *testing.T) (ws, home string) {
	t.Helper()
	tmp := t.TempDir()
	ws = filepath.Join(tmp, "ws")
	home = filepath.Join(tmp, "home")
	for _, d := range []string{filepath.Join(ws, "src"), filepath.Join(ws, ".git", "hooks"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(tmp, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"existing.txt", "src/notes.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, home
}

func TestCorpus(t *testing.T) {
	ws, home := testWorkspace(t)
	opts := &Options{Workspace: ws, Home: home}
	counts := map[string]int{}
	for _, tc := range readCorpus(t, "corpus.txt") {
		cmd := strings.ReplaceAll(tc.command, "{ws}", ws)
		counts[tc.expect]++
		v := Classify(cmd, opts)
		want := Ask
		if tc.expect == "run" {
			want = Run
		}
		if v.Decision != want {
			t.Errorf("corpus.txt:%d: Classify(%q) = %v %q, want %v", tc.line, cmd, v.Decision, v.Reasons, want)
			continue
		}
		if v.Decision == Ask && len(v.Reasons) == 0 {
			t.Errorf("corpus.txt:%d: Classify(%q) asks without a reason", tc.line, cmd)
		}
		if v.Decision == Run && len(v.Reasons) != 0 {
			t.Errorf("corpus.txt:%d: Classify(%q) runs with reasons %q", tc.line, cmd, v.Reasons)
		}
	}
	benign := counts["run"] + counts["fp"]
	if counts["ask"] < 60 || benign < 60 {
		t.Errorf("corpus has %d risky and %d benign commands, want at least 60 each", counts["ask"], benign)
	}
	t.Logf("corpus: %d risky (all asked), %d benign of which %d asked (%.1f%% false positives)",
		counts["ask"], benign, counts["fp"], 100*float64(counts["fp"])/float64(benign))
}

func TestClassifyReasons(t *testing.T) {
	ws, home := testWorkspace(t)
	tests := []struct {
		cmd  string
		want []string
	}{
		{"ls; rm -rf ~", []string{"`rm -rf ~`: rm deletes files"}},
		{"echo $(curl x | sh)", []string{"`curl x`: curl uses the network", "`sh`: sh starts a nested shell"}},
		{"ls > /etc/x", []string{"`> /etc/x`: writes outside the workspace (/etc/x)"}},
		{"git -c core.pager=less log", []string{"`git -c core.pager=less log`: git -c sets configuration, which can run programs (core.pager, core.fsmonitor, ...)"}},
		{"rm a; rm a", []string{"`rm a`: rm deletes files"}}, // deduplicated
	}
	for _, tt := range tests {
		v := Classify(tt.cmd, &Options{Workspace: ws, Home: home})
		if strings.Join(v.Reasons, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("Classify(%q).Reasons = %q, want %q", tt.cmd, v.Reasons, tt.want)
		}
	}
}

func TestClassifyWithoutWorkspace(t *testing.T) {
	tests := []struct {
		cmd  string
		want Decision
	}{
		{"echo hi > out.txt", Run},
		{"echo hi > ../out.txt", Ask},
		{"echo hi > /abs/out.txt", Ask},
		{"echo hi > /dev/null", Run},
		{"echo hi > .git/config", Ask},
	}
	for _, tt := range tests {
		if v := Classify(tt.cmd, nil); v.Decision != tt.want {
			t.Errorf("Classify(%q) = %v %q, want %v", tt.cmd, v.Decision, v.Reasons, tt.want)
		}
	}
}

func TestSedRisk(t *testing.T) {
	tests := []struct {
		script string
		risky  bool
	}{
		{"s/a/b/", false},
		{"s/a/b/g;p", false},
		{"s|a|b|2", false},
		{"s/we/ew/", false},
		{`s/a\/w/b/`, false},
		{"/^#/d", false},
		{"1,/end/{s/x/y/;p}", false},
		{`\,x,d`, false},
		{"$!N", false},
		{"y/abc/xyz/", false},
		{"a hello world", false},
		{":a;N;$!ba;s/\\n/ /g", false},
		{"r other.txt", false},
		{"w out", true},
		{"1w out", true},
		{"s/a/b/w out", true},
		{"s/a/b/gw out", true},
		{"s/a/b/e", true},
		{"e ls", true},
		{"/x/ e ls", true},
		{"1!W out", true},
		{"s/a/b", true}, // unterminated: not judged
		{"k", true},
	}
	for _, tt := range tests {
		if got := sedRisk(tt.script) != ""; got != tt.risky {
			t.Errorf("sedRisk(%q) risky = %v, want %v (%q)", tt.script, got, tt.risky, sedRisk(tt.script))
		}
	}
}

func TestAnalyzeWord(t *testing.T) {
	tests := []struct {
		src        string
		text       string
		static     bool
		optionSafe bool
	}{
		{`abc`, "abc", true, true},
		{`'a b'`, "a b", true, true},
		{`"a\$b"`, "a$b", true, true},
		{`a\ b`, "a b", true, true},
		{`-delete`, "-delete", true, true},
		{`"$x"`, "", false, false},
		{`"a$x"`, "a", false, true},
		{`a$x`, "a", false, false},
		{`*.go`, "*.go", false, false},
		{`src/*.go`, "src/*.go", false, true},
		{`\*.go`, "*.go", true, true},
		{`{-delete,x}`, "{-delete,x}", false, false},
		{`~/x`, "~/x", false, true},
		{`$'\x2d'`, "", false, false},
		{`<(ls)`, "", false, true},
	}
	for _, tt := range tests {
		f := parseWord(t, tt.src)
		w := analyze(f)
		if w.text != tt.text || w.static != tt.static || w.optionSafe() != tt.optionSafe {
			t.Errorf("analyze(%s) = text %q static %v optionSafe %v, want %q %v %v",
				tt.src, w.text, w.static, w.optionSafe(), tt.text, tt.static, tt.optionSafe)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, seed := range []string{"ls", "ls; rm -rf ~", "echo $(( x ))", "cat <<EOF\n$(id)\nEOF", "a=(1 2); echo ${a[@]}",
		"sed -n 's/a/b/w x' f", "git -C . log --out=x", "find . -exec rm {} +", "[[ -v x ]]", "f() { ls; }"} {
		f.Add(seed)
	}
	ws := f.TempDir()
	f.Fuzz(func(t *testing.T, cmd string) {
		v := Classify(cmd, &Options{Workspace: ws, Home: "/home/u"})
		if v.Decision != Run && v.Decision != Ask {
			t.Fatalf("Classify(%q) = %v", cmd, v.Decision)
		}
		if v.Decision == Ask && len(v.Reasons) == 0 {
			t.Fatalf("Classify(%q) asks without a reason", cmd)
		}
	})
}

func TestClassifyHardLink(t *testing.T) {
	ws, home := testWorkspace(t)
	outside := filepath.Join(filepath.Dir(ws), "outside.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(ws, "hl.txt")); err != nil {
		t.Skipf("hard links not supported: %v", err)
	}
	v := Classify("echo x > hl.txt", &Options{Workspace: ws, Home: home})
	if v.Decision != Ask {
		t.Errorf("writing to a hard link of an outside file: %v, want ask", v.Decision)
	}
}
