package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the outputs of the examples in docs/writing-tools.md")

// TestWritingToolsDoc runs the examples of docs/writing-tools.md: each
// block after a <!-- file: PATH --> line is written to PATH in a scratch
// folder, and each "$ lcp ..." line of a console block runs there (in
// document order); what it prints (stdout, then stderr) must be the lines
// that follow it. -update writes the outputs into the page instead.
func TestWritingToolsDoc(t *testing.T) {
	needPython(t)
	page, err := filepath.Abs("../../docs/writing-tools.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	lines := strings.SplitAfter(string(raw), "\n")
	var out strings.Builder
	fileRE := regexp.MustCompile(`^<!-- file: (\S+) -->\n$`)
	commands := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		if m := fileRE.FindStringSubmatch(line); m != nil {
			// The fenced block that follows is the file.
			var body strings.Builder
			out.WriteString(lines[i+1])
			j := i + 2
			for ; j < len(lines) && lines[j] != "```\n"; j++ {
				body.WriteString(lines[j])
				out.WriteString(lines[j])
			}
			if err := os.MkdirAll(filepath.Dir(m[1]), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(m[1], []byte(body.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			i = j - 1
			continue
		}
		if line != "```console\n" {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] != "```\n" {
			cmd, ok := strings.CutPrefix(strings.TrimSuffix(lines[j], "\n"), "$ ")
			if !ok {
				t.Fatalf("%s:%d: a console block must start with a command: %q", page, j+1, lines[j])
			}
			var want strings.Builder
			k := j + 1
			for ; k < len(lines) && lines[k] != "```\n" && !strings.HasPrefix(lines[k], "$ "); k++ {
				want.WriteString(lines[k])
			}
			got := runDocCommand(t, cmd)
			commands++
			if !*update && got != want.String() {
				t.Errorf("%s:%d: $ %s\n got:\n%s\n want:\n%s", page, j+1, cmd, got, want.String())
			}
			out.WriteString("$ " + cmd + "\n" + got)
			j = k
		}
		i = j - 1
	}
	if commands < 8 {
		t.Errorf("only %d commands ran", commands)
	}
	if *update {
		if err := os.WriteFile(page, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runDocCommand runs one lcp command line of the docs and returns what it
// printed, stdout then stderr, without the machine's sandbox warning.
func runDocCommand(t *testing.T, line string) string {
	t.Helper()
	args, err := shellWords(line)
	if err != nil || len(args) == 0 || args[0] != "lcp" {
		t.Fatalf("%q: only lcp commands run in the docs (%v)", line, err)
	}
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Args: args[1:]}
	Main(env)
	var kept []string
	for _, l := range strings.SplitAfter(stderr.String(), "\n") {
		if !strings.HasPrefix(l, "lcp: warning: no kernel sandbox") {
			kept = append(kept, l)
		}
	}
	return stdout.String() + strings.Join(kept, "")
}

// shellWords splits a command line as a POSIX shell would, for the
// quoting the docs use: single quotes, double quotes and backslashes.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
