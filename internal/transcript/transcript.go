// Package transcript runs end-to-end tests written as conversations: txtar
// files a reviewer reads as the commands a user types and what lcp answers
// (CLI transcripts), or as the JSON-RPC messages an MCP client sends and
// receives (MCP transcripts).
//
// A transcript is a txtar archive. Its comment says what it shows. The
// files before the first step are fixtures, written under a fresh work
// directory ($WORK). The steps follow, in order:
//
//	-- cmd --     one command line, "lcp ARGS...", with shell quoting; $WORK expands
//	-- stdin --   what the command reads (optional)
//	-- stdout --  what it must print (optional: not checked when absent)
//	-- stderr --  what it must print on stderr (optional: not checked when absent)
//	-- exit --    its exit code (optional: 0 when absent)
//
//	-- args --    the lcp mcp command line (MCP transcripts; once, before the messages)
//	-- send --    JSON-RPC messages the client writes, one JSON value each
//	-- recv --    messages the server must write next, in any order
//
// Expected text may hold placeholders: ${WORK} (the work directory), ${ANY}
// (any text within a line), ${NUM} (a number), ${TIME} (a duration such as
// 1.2s or 350ms), and ${LINES} on a line of its own (any number of lines).
// In expected JSON, a string value may hold the same placeholders, and a
// value "${NAME}" for any other upper-case NAME binds to whatever value is
// there the first time and must be equal afterwards; in a send section
// "${NAME}" is replaced by the bound value (so a client can answer the
// server's own requests by their ids).
//
// A comment line "[exec:PROGRAM]" says the transcript needs PROGRAM on
// the PATH (python3, say): without it the runner skips the transcript and
// says why, and the transcripts that need nothing still run.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// Section kinds a transcript's steps use.
const (
	Cmd    = "cmd"
	Stdin  = "stdin"
	Stdout = "stdout"
	Stderr = "stderr"
	Exit   = "exit"
	Args   = "args"
	Send   = "send"
	Recv   = "recv"
)

var stepKinds = map[string]bool{Cmd: true, Stdin: true, Stdout: true, Stderr: true, Exit: true, Args: true, Send: true, Recv: true}

// Script is a parsed transcript.
type Script struct {
	// Path is the file the script was read from.
	Path string
	// Comment is the archive's comment: what the transcript shows.
	Comment string
	// Needs are the programs the transcript needs on the PATH, from its
	// comment's "[exec:PROGRAM]" lines.
	Needs []string
	// Files are the fixtures, written under the work directory.
	Files []txtar.File
	// Steps are the sections after the fixtures, in order.
	Steps []Section

	archive *txtar.Archive
}

// Section is one step of a script: its kind and its text. Index is its
// position among the archive's files, used when the golden output is
// rewritten.
type Section struct {
	Kind  string
	Text  string
	Index int
}

// Parse reads a transcript. It refuses a script with a step kind out of
// place (stdout before any cmd, args after a send) or a fixture path that
// leaves the work directory.
func Parse(path string, data []byte) (*Script, error) {
	a := txtar.Parse(data)
	s := &Script{Path: path, Comment: string(a.Comment), archive: a}
	needs, err := conditions(s.Comment)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Needs = needs
	steps := false
	for i, f := range a.Files {
		if !stepKinds[f.Name] {
			if steps {
				return nil, fmt.Errorf("%s: fixture %q after the first step: put the files first", path, f.Name)
			}
			if err := checkFixture(f.Name); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			s.Files = append(s.Files, f)
			continue
		}
		steps = true
		s.Steps = append(s.Steps, Section{Kind: f.Name, Text: string(f.Data), Index: i})
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseFile reads a transcript from a file.
func ParseFile(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return Parse(path, data)
}

// conditions reads the comment's condition lines: a whole line in
// brackets. "[exec:PROGRAM]" is the only kind; another is refused, so that
// a misspelt condition cannot quietly run a case where it cannot pass.
func conditions(comment string) ([]string, error) {
	var needs []string
	for line := range strings.Lines(comment) {
		line = strings.TrimSpace(line)
		if len(line) < 2 || line[0] != '[' || line[len(line)-1] != ']' {
			continue
		}
		cond := line[1 : len(line)-1]
		prog, ok := strings.CutPrefix(cond, "exec:")
		if !ok || prog == "" || strings.ContainsAny(prog, " \t/") {
			return nil, fmt.Errorf("condition %s: the runner knows [exec:PROGRAM] (a program on the PATH)", line)
		}
		needs = append(needs, prog)
	}
	return needs, nil
}

func checkFixture(name string) error {
	if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return fmt.Errorf("fixture %q: a path inside the work directory, please", name)
	}
	return nil
}

// check says whether the steps are in an order a runner understands.
func (s *Script) check() error {
	inCmd, mcp := false, false
	for i, st := range s.Steps {
		switch st.Kind {
		case Cmd:
			if mcp {
				return fmt.Errorf("step %d: cmd in an MCP transcript", i+1)
			}
			inCmd = true
			if _, err := CommandArgs(st.Text, nil); err != nil {
				return fmt.Errorf("step %d: %w", i+1, err)
			}
		case Stdin, Stdout, Stderr, Exit:
			if !inCmd {
				return fmt.Errorf("step %d: %s before any cmd", i+1, st.Kind)
			}
			if st.Kind == Exit {
				if _, err := strconv.Atoi(strings.TrimSpace(st.Text)); err != nil {
					return fmt.Errorf("step %d: exit %q is not a number", i+1, strings.TrimSpace(st.Text))
				}
			}
		case Args:
			if i != 0 {
				return fmt.Errorf("step %d: args must be the first step", i+1)
			}
			mcp = true
			if _, err := CommandArgs(st.Text, nil); err != nil {
				return fmt.Errorf("step %d: %w", i+1, err)
			}
		case Send, Recv:
			if inCmd {
				return fmt.Errorf("step %d: %s in a CLI transcript", i+1, st.Kind)
			}
			mcp = true
			if _, err := splitJSON(st.Text); err != nil {
				return fmt.Errorf("step %d (%s): %w", i+1, st.Kind, err)
			}
		}
	}
	if len(s.Steps) == 0 {
		return errors.New("no steps: a transcript needs a cmd or a send")
	}
	return nil
}

// WriteFixtures writes the script's files under dir.
func (s *Script) WriteFixtures(dir string) error {
	for _, f := range s.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
	}
	return nil
}

// Replace sets a section's text, for rewriting the golden output.
func (s *Script) Replace(sec Section, text string) {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	s.archive.Files[sec.Index].Data = []byte(text)
}

// Format is the script as a txtar file again, with any replaced sections.
func (s *Script) Format() []byte { return txtar.Format(s.archive) }

// CommandArgs splits a command line as a shell would (quotes, $VAR), with
// env giving the variables, and drops the leading "lcp".
func CommandArgs(line string, env map[string]string) ([]string, error) {
	line = strings.TrimSpace(line)
	if strings.Contains(line, "\n") {
		return nil, fmt.Errorf("command %q: one line, please", line)
	}
	words, err := splitWords(line, env)
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", line, err)
	}
	if len(words) == 0 || words[0] != "lcp" {
		return nil, fmt.Errorf("command %q: it must start with lcp", line)
	}
	return words[1:], nil
}

// splitWords splits on blanks, keeping 'single' and "double" quoted text
// together and expanding $NAME and ${NAME} outside single quotes.
func splitWords(line string, env map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			if quote == c {
				quote = 0
			} else if quote == 0 {
				quote = c
			} else {
				cur.WriteByte(c)
			}
			inWord = true
		case c == '\\' && i+1 < len(line) && quote == 0:
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == '$':
			name, n := varName(line[i+1:])
			if name == "" {
				cur.WriteByte(c)
			} else {
				v, ok := env[name]
				if env != nil && !ok {
					return nil, fmt.Errorf("unknown variable $%s", name)
				}
				cur.WriteString(v)
				i += n
			}
			inWord = true
		case (c == ' ' || c == '\t') && quote == 0:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

var nameRE = regexp.MustCompile(`^(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

func varName(s string) (string, int) {
	m := nameRE.FindStringSubmatch(s)
	if m == nil {
		return "", 0
	}
	if m[1] != "" {
		return m[1], len(m[0])
	}
	return m[2], len(m[0])
}

// splitJSON splits a section into its JSON values, each compacted.
func splitJSON(text string) ([]json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	var out []json.RawMessage
	for {
		var m json.RawMessage
		err := dec.Decode(&m)
		if errors.Is(err, errIOEOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("message %d is not JSON: %w", len(out)+1, err)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, m); err != nil {
			return nil, fmt.Errorf("message %d: %w", len(out)+1, err)
		}
		out = append(out, b.Bytes())
	}
}
