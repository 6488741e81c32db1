package transcript

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echo is a fake lcp: "echo WORDS" prints them, "fail" exits 1 with a
// message naming the work directory; stdin is printed back after them.
func echo(_ context.Context, dir string, args []string, stdin string) (string, string, int) {
	if len(args) > 0 && args[0] == "fail" {
		return "", "no luck in " + dir + "\n", 1
	}
	return strings.Join(args[1:], " ") + "\n" + stdin, "", 0
}

func writeScript(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.txtar")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunCLI(t *testing.T) {
	p := writeScript(t, `-- a.txt --
x
-- cmd --
lcp echo hello 'big world'
-- stdin --
in
-- stdout --
hello big world
in
-- cmd --
lcp fail
-- stderr --
no luck in ${WORK}
-- exit --
1
`)
	RunCLI(t, p, echo, Options{})
}

// A transcript whose program is missing is skipped before any command
// runs; one whose program is there runs.
func TestRunCLINeeds(t *testing.T) {
	for _, tt := range []struct {
		prog string
		skip bool
	}{
		{"lcp-transcript-test-no-such-program", true},
		{"sh", false},
	} {
		p := writeScript(t, "[exec:"+tt.prog+"]\n-- cmd --\nlcp echo hi\n-- stdout --\nhi\n")
		ran, skipped := false, false
		t.Run(tt.prog, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			RunCLI(t, p, func(ctx context.Context, dir string, args []string, stdin string) (string, string, int) {
				ran = true
				return echo(ctx, dir, args, stdin)
			}, Options{})
		})
		if skipped != tt.skip || ran == tt.skip {
			t.Errorf("[exec:%s]: skipped %v, ran %v; want skipped %v", tt.prog, skipped, ran, tt.skip)
		}
	}
}

// -update rewrites the sections that differ, the work directory as
// ${WORK}, and leaves the rest alone.
func TestRunCLIUpdate(t *testing.T) {
	p := writeScript(t, `-- cmd --
lcp echo '${ANY}' stays
-- stdout --
${ANY} stays
-- cmd --
lcp fail
-- stdout --
-- stderr --
wrong
-- exit --
0
`)
	RunCLI(t, p, echo, Options{Update: true})
	b, _ := os.ReadFile(p)
	want := `-- cmd --
lcp echo '${ANY}' stays
-- stdout --
${ANY} stays
-- cmd --
lcp fail
-- stdout --
-- stderr --
no luck in ${WORK}
-- exit --
1
`
	if string(b) != want {
		t.Errorf("updated:\n%s\nwant:\n%s", b, want)
	}
	RunCLI(t, p, echo, Options{}) // and it passes now
}

// fakeServer answers "ping" requests with pong results, and asks the
// client a question (a request with its own id) before answering "ask".
func fakeServer(_ context.Context, _ string, _ []string) (io.WriteCloser, io.Reader, func() (int, string), error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		enc := json.NewEncoder(outW)
		var pending json.RawMessage
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return
			}
			switch {
			case m.Method == "ping":
				enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"data": "pinged"}})
				enc.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"pong": true}})
			case m.Method == "ask":
				pending = m.ID
				enc.Encode(map[string]any{"jsonrpc": "2.0", "id": "srv-7", "method": "question"})
			case m.Result != nil:
				enc.Encode(map[string]any{"jsonrpc": "2.0", "id": pending, "result": map[string]any{"answer": m.Result}})
			}
		}
	}()
	return inW, outR, func() (int, string) { <-done; return 0, "" }, nil
}

func TestRunMCP(t *testing.T) {
	p := writeScript(t, `-- send --
{"jsonrpc": "2.0", "id": 1, "method": "ping"}
-- recv --
{"jsonrpc": "2.0", "id": 1, "result": {"pong": true}}
{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "${ANY}"}}
-- send --
{"jsonrpc": "2.0", "id": 2, "method": "ask"}
-- recv --
{"jsonrpc": "2.0", "id": "${Q}", "method": "question"}
-- send --
{"jsonrpc": "2.0", "id": "${Q}", "result": 42}
-- recv --
{"jsonrpc": "2.0", "id": 2, "result": {"answer": 42}}
`)
	RunMCP(t, p, fakeServer, Options{})
}

func TestRunMCPUpdate(t *testing.T) {
	p := writeScript(t, `-- send --
{"jsonrpc": "2.0", "id": 1, "method": "ping"}
-- recv --
{}
{}
`)
	RunMCP(t, p, fakeServer, Options{Update: true})
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `"pong": true`) || !strings.Contains(string(b), `"data": "pinged"`) {
		t.Errorf("updated:\n%s", b)
	}
	RunMCP(t, p, fakeServer, Options{})
}
