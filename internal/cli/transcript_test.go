package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/internal/buildinfo"
	"github.com/lcptools/lcp/internal/transcript"
)

// runInProcess runs one lcp command line through Main, as the lcp binary
// would, in dir.
func runInProcess(_ context.Context, dir string, args []string, stdin string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Args: args,
		Getwd: func() (string, error) { return dir, nil }}
	code := Main(env)
	return out.String(), errb.String(), code
}

// serveInProcess runs `lcp mcp ...` through Main on pipes.
func serveInProcess(_ context.Context, dir string, args []string) (io.WriteCloser, io.Reader, func() (int, string), error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	env := &Env{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(string) string { return "" }, Args: args,
		Getwd: func() (string, error) { return dir, nil }}
	done := make(chan int, 1)
	go func() {
		code := Main(env)
		outW.Close()
		done <- code
	}()
	return inW, outR, func() (int, string) { return <-done, stderr.String() }, nil
}

// TestCLITranscripts runs testdata/transcripts/cli/*.txtar: commands a
// user types and what lcp prints. go test -run TestCLITranscripts -update
// rewrites the sections that differ (-update is docs_test.go's flag: it
// rewrites the docs' example outputs too). A transcript that runs Python
// tools says so on a comment line, [exec:python3], and only it is skipped
// on a machine without python3.
func TestCLITranscripts(t *testing.T) {
	for _, f := range transcript.Files(t, filepath.Join("testdata", "transcripts", "cli")) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			transcript.RunCLI(t, f, runInProcess, transcript.Options{Update: *update})
		})
	}
}

// TestMCPTranscripts runs testdata/transcripts/mcp/*.txtar: the JSON-RPC
// messages a client exchanges with `lcp mcp` over stdio.
func TestMCPTranscripts(t *testing.T) {
	// A library's system prompt is part of initialize's answer: its
	// function's budget includes a worker's cold start, which a busy
	// machine stretches past the 5 s default. (Not t.Setenv: the cases run
	// in parallel; no other test of the package reads it.)
	os.Setenv("LCP_PROMPT_TIMEOUT", "3m")
	t.Cleanup(func() { os.Unsetenv("LCP_PROMPT_TIMEOUT") })
	version, _ := json.Marshal(buildinfo.Version())
	bind := transcript.Vars{"VERSION": version}
	for _, f := range transcript.Files(t, filepath.Join("testdata", "transcripts", "mcp")) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			transcript.RunMCP(t, f, serveInProcess, transcript.Options{Update: *update, Bind: bind})
		})
	}
}
