package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sedScripts are scripts whose e and w commands are hidden from a naive
// reading: after labels, in blocks, beside text of a, i and c, in
// regular expressions and replacements. MARK is replaced by a file name.
var sedScripts = []string{
	"p", "s/a/b/", "s/e/w/g", "y/ew/we/", "/e touch MARK/d", "\\,e touch MARK,p",
	":a e touch MARK", ":a;e touch MARK", ":a\ne touch MARK", "b a e touch MARK\n:a",
	"b end;e touch MARK\n:end", "t x e touch MARK\n:x", "T x;e touch MARK\n:x", "{e touch MARK\n}",
	"1{p;e touch MARK\n}", "$!{p};e touch MARK", "a e touch MARK", "a\\\ne touch MARK", "i\\\nfoo\\\ne touch MARK",
	"c text ; e touch MARK", "# e touch MARK", "#n\ne touch MARK", "s/x/touch MARK/e", "s|x|touch MARK|ge",
	"s/x/y/;s/y/touch MARK/e", "s/x/y/w MARK", "w MARK", "1w MARK", "/x/ w MARK", "s/x/y/gpw MARK",
	"y/abc/xyz/;w MARK", "l 5;e touch MARK", "q 1\ne touch MARK", "v 4.2\ne touch MARK", "v;e touch MARK",
	"1,/x/{s/x/y/;p}", "1~2e touch MARK", "0,/x/e touch MARK", "/x/,+2 e touch MARK", "/x/I,~4!e touch MARK",
	"s/a\\/e/b/", "s/[/]/x/", "/[/]/p", "s/x/\\\ne touch MARK/",
}

// TestSedParserMatchesGNU runs each script with GNU sed on one line of
// input: the marker file exists afterwards exactly when sed ran an e
// command or opened a w file, which must be what parseSed reports.
func TestSedParserMatchesGNU(t *testing.T) {
	out, err := exec.Command("sed", "--version").Output()
	if err != nil || !strings.Contains(string(out), "GNU sed") {
		t.Skip("needs GNU sed")
	}
	for _, script := range sedScripts {
		dir := t.TempDir()
		mark := filepath.Join(dir, "mark")
		s := strings.ReplaceAll(script, "MARK", mark)
		cmd := exec.Command("sed", "-n", s)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader("x\n")
		runErr := cmd.Run()
		_, statErr := os.Stat(mark)
		gnu := statErr == nil
		cmds, perr := parseSed(s)
		ours := false
		for _, c := range cmds {
			ours = ours || c.name == 'e' || c.name == 'w' || c.name == 'W' || strings.ContainsRune(c.flags, 'e') || c.file != ""
		}
		switch {
		case perr != nil && runErr == nil && gnu:
			t.Errorf("%q: GNU sed ran it (and its e or w), parseSed refused it: %v", script, perr)
		case perr == nil && gnu && !ours:
			t.Errorf("%q: GNU sed ran an e or w command that parseSed did not see: %+v", script, cmds)
		case perr == nil && runErr == nil && !gnu && ours && !strings.Contains(script, "x e") && !strings.Contains(script, "~4!"):
			// Commands under an address that never matches do not run;
			// seeing them is harmless but worth knowing.
			t.Logf("%q: parseSed sees e or w that did not run with this input", script)
		}
		if sedRisk(s) == "" && gnu {
			t.Errorf("%q: sedRisk does not ask", script)
		}
	}
}

func FuzzParseSed(f *testing.F) {
	for _, s := range sedScripts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		cmds, err := parseSed(script)
		if err == nil && len(cmds) > len(script) {
			t.Fatalf("%q: %d commands from %d bytes", script, len(cmds), len(script))
		}
	})
}

func TestAwkFindings(t *testing.T) {
	tests := []struct {
		prog string
		want string // "" nothing; "ask"; "write:FILE"; "read:FILE"
	}{
		{`{ print $1 }`, ""},
		{`$3 > 100`, ""},
		{`{ if ($2 > 10) print $1 }`, ""},
		{`/"/ { print $1 }`, ""},
		{`{ print "a|b" }`, ""},
		{`{ x = a || b }`, ""},
		{`/"/ { system("id") }`, "ask"},
		{`/[/"]/ { system("id") }`, "ask"},
		{`{ print | "sh" }`, "ask"},
		{`BEGIN { "id" | getline x }`, "ask"},
		{`BEGIN { cmd |& getline }`, "ask"},
		{`@load "x"`, "ask"},
		{`{ print > "out.txt" }`, "write:out.txt"},
		{`{ printf "%s", $0 >> "/etc/x" }`, "write:/etc/x"},
		{`{ print $0 > $2 }`, "ask"},
		{`{ print (a > b) }`, ""},
		{`BEGIN { while ((getline line < "/etc/shadow") > 0) print line }`, "read:/etc/shadow"},
		{`{ print "x" } # system("id")`, ""},
		{`{ print "unterminated }`, "ask"},
	}
	for _, tt := range tests {
		fs := awkFindings(tt.prog)
		got := ""
		for _, f := range fs {
			switch {
			case f.why != "":
				got = "ask"
			case f.write != "":
				got = "write:" + f.write
			case f.read != "":
				got = "read:" + f.read
			}
			if got == "ask" {
				break
			}
		}
		if got != tt.want {
			t.Errorf("awkFindings(%q) = %+v, want %s", tt.prog, fs, tt.want)
		}
	}
}

func FuzzAwkFindings(f *testing.F) {
	for _, s := range []string{`{ print $1 }`, `/"/ { system("id") }`, `{ print > "x" }`, `BEGIN { "id" | getline }`,
		`/[/"]/ { x = "\\" }`, `# comment "`, `{ a = b / c / d }`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prog string) {
		for _, fd := range awkFindings(prog) {
			if fd.why == "" && fd.write == "" && fd.read == "" {
				t.Fatalf("%q: an empty finding", prog)
			}
		}
	})
}
