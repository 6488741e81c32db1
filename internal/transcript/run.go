package transcript

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// HangAfter is how long a runner waits for a message or a command before
// it calls the transcript hung: far beyond any expected time, so a busy
// machine never trips it.
const HangAfter = 3 * time.Minute

// Options are a runner's settings.
type Options struct {
	// Update rewrites the failing expected sections with what was
	// received (the work directory as ${WORK}), instead of failing.
	Update bool
	// Env are variables a cmd or args line may use, besides $WORK.
	Env map[string]string
	// Bind are variables of expected JSON bound before the first message
	// (the server's version, say).
	Bind Vars
}

// Command runs one lcp command line in dir with stdin, and returns what it
// printed and its exit code.
type Command func(ctx context.Context, dir string, args []string, stdin string) (stdout, stderr string, exit int)

// Server starts lcp with args in dir (an lcp mcp command line) and
// returns the pipe to its standard input, its standard output, and a
// function that waits for it to end after its input is closed, returning
// its exit code and its standard error.
type Server func(ctx context.Context, dir string, args []string) (in io.WriteCloser, out io.Reader, wait func() (int, string), err error)

// Files lists the transcripts in dir matching *.txtar.
func Files(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in %s (%v)", dir, err)
	}
	return files
}

func load(t testing.TB, path string, opts *Options) (*Script, string, map[string]string) {
	t.Helper()
	s, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range s.Needs {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s needs %s, which is not on the PATH ([exec:%s])", filepath.Base(path), prog, prog)
		}
	}
	work := t.TempDir()
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}
	if err := s.WriteFixtures(work); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WORK": work}
	for k, v := range opts.Env {
		env[k] = v
	}
	return s, work, env
}

// save writes an updated script back, when the runner was asked to.
func save(t testing.TB, s *Script, changed bool, opts *Options) {
	t.Helper()
	if !changed || !opts.Update {
		return
	}
	if err := os.WriteFile(s.Path, s.Format(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: updated", s.Path)
}

// RunCLI runs a CLI transcript: each cmd with its stdin, comparing its
// stdout, stderr and exit code with the expected sections.
func RunCLI(t *testing.T, path string, run Command, opts Options) {
	t.Helper()
	s, work, env := load(t, path, &opts)
	changed := false
	for i := 0; i < len(s.Steps); {
		st := s.Steps[i]
		if st.Kind != Cmd {
			t.Fatalf("%s: step %d: %s without a cmd", path, i+1, st.Kind)
		}
		args, err := CommandArgs(st.Text, env)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var stdin string
		var checks []Section
		for i++; i < len(s.Steps) && s.Steps[i].Kind != Cmd; i++ {
			if s.Steps[i].Kind == Stdin {
				stdin = s.Steps[i].Text
				continue
			}
			checks = append(checks, s.Steps[i])
		}
		ctx, cancel := context.WithTimeout(context.Background(), HangAfter)
		stdout, stderr, code := run(ctx, work, args, stdin)
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("%s: $ %s: still running after %v (a hang)\nstdout:\n%s\nstderr:\n%s", path, strings.TrimSpace(st.Text), HangAfter, stdout, stderr)
		}
		sawExit := false
		for _, c := range checks {
			var got string
			switch c.Kind {
			case Stdout:
				got = stdout
			case Stderr:
				got = stderr
			case Exit:
				sawExit = true
				if want, _ := strconv.Atoi(strings.TrimSpace(c.Text)); want != code {
					if opts.Update {
						s.Replace(c, strconv.Itoa(code))
						changed = true
						continue
					}
					t.Errorf("%s: $ %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", path, strings.TrimSpace(st.Text), code, want, stdout, stderr)
				}
				continue
			}
			ok, err := MatchText(c.Text, got, work)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if ok {
				continue
			}
			if opts.Update {
				s.Replace(c, Normalize(got, work))
				changed = true
				continue
			}
			t.Errorf("%s: $ %s\n%s:\n%s\nwant:\n%s", path, strings.TrimSpace(st.Text), c.Kind, got, c.Text)
		}
		if !sawExit && code != 0 {
			t.Errorf("%s: $ %s\nexit %d, want 0 (add an exit section)\nstdout:\n%s\nstderr:\n%s", path, strings.TrimSpace(st.Text), code, stdout, stderr)
		}
	}
	save(t, s, changed, &opts)
}

type message struct {
	raw json.RawMessage
	err error
}

// RunMCP runs an MCP transcript: it starts the server from the args
// section (default "lcp mcp"), writes each send section's messages and
// waits for each recv section's, then closes the server's input and
// expects it to end with nothing more said.
func RunMCP(t *testing.T, path string, start Server, opts Options) {
	t.Helper()
	s, work, env := load(t, path, &opts)
	steps := s.Steps
	line := "lcp mcp"
	if steps[0].Kind == Args {
		line = steps[0].Text
		steps = steps[1:]
	}
	args, err := CommandArgs(line, env)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, out, wait, err := start(ctx, work, args)
	if err != nil {
		t.Fatalf("%s: starting lcp %s: %v", path, strings.Join(args, " "), err)
	}
	msgs := make(chan message)
	go func() {
		defer close(msgs)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			b := append([]byte(nil), sc.Bytes()...)
			var err error
			if !json.Valid(b) {
				err = fmt.Errorf("not a JSON message: %q", b)
			}
			select {
			case msgs <- message{raw: b, err: err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	stopped := false
	stop := func() string {
		if stopped {
			return ""
		}
		stopped = true
		in.Close()
		code, stderr := wait()
		if code != 0 {
			return fmt.Sprintf("lcp ended with exit %d\n", code) + stderr
		}
		return stderr
	}
	fail := func(format string, a ...any) {
		t.Helper()
		cancel()
		stderr := stop()
		t.Fatalf("%s: "+format+"\nlcp's stderr:\n%s", append(append([]any{path}, a...), stderr)...)
	}
	vars := maps.Clone(opts.Bind)
	if vars == nil {
		vars = Vars{}
	}
	changed := false
	for i, st := range steps {
		want, err := splitJSON(st.Text)
		if err != nil {
			fail("step %d: %v", i+1, err)
		}
		switch st.Kind {
		case Send:
			for _, m := range want {
				m, err := Expand(m, vars, work)
				if err != nil {
					fail("step %d (send): %v", i+1, err)
				}
				if _, err := in.Write(append(m, '\n')); err != nil {
					fail("step %d (send): %v", i+1, err)
				}
			}
		case Recv:
			var got []json.RawMessage
			left := slicesClone(want)
			mismatch := false
			for len(left) > 0 {
				var m message
				var ok bool
				select {
				case m, ok = <-msgs:
				case <-time.After(HangAfter):
					fail("step %d (recv): no message for %v (a hang); still expected:\n%s", i+1, HangAfter, pretties(left, work))
				}
				if !ok {
					if opts.Update {
						mismatch = true
						break
					}
					fail("step %d (recv): lcp closed its output; still expected:\n%s", i+1, pretties(left, work))
				}
				if m.err != nil {
					fail("step %d (recv): %v", i+1, m.err)
				}
				got = append(got, m.raw)
				matched := -1
				var first error
				for j, w := range left {
					err := MatchJSON(w, m.raw, vars, work)
					if err == nil {
						matched = j
						break
					}
					if first == nil {
						first = err
					}
				}
				if matched >= 0 {
					left = append(left[:matched], left[matched+1:]...)
					continue
				}
				if opts.Update {
					left, mismatch = left[1:], true
					continue
				}
				fail("step %d (recv): unexpected message\n%s\n%v\nstill expected:\n%s", i+1, Pretty(m.raw, work), first, pretties(left, work))
			}
			if mismatch {
				s.Replace(st, pretties(got, work))
				changed = true
			}
		default:
			fail("step %d: %s in an MCP transcript", i+1, st.Kind)
		}
	}
	in.Close()
	var extra []json.RawMessage
	for {
		var m message
		var ok bool
		select {
		case m, ok = <-msgs:
		case <-time.After(HangAfter):
			fail("lcp did not end for %v after its input closed (a hang)", HangAfter)
		}
		if !ok {
			break
		}
		extra = append(extra, m.raw)
	}
	if stderr := stop(); strings.HasPrefix(stderr, "lcp ended with exit") {
		t.Errorf("%s: %s", path, stderr)
	}
	if len(extra) > 0 {
		t.Errorf("%s: messages after the last step:\n%s", path, pretties(extra, work))
	}
	save(t, s, changed, &opts)
}

func slicesClone(m []json.RawMessage) []json.RawMessage { return append([]json.RawMessage(nil), m...) }

func pretties(ms []json.RawMessage, work string) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(Pretty(m, work))
		b.WriteString("\n")
	}
	return b.String()
}
