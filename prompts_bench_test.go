package lcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/mcp"
)

// slowPromptLib writes a library of ten tools; with prompts, one of them
// has a prompt function that takes sleep seconds (the benchmark uses the
// issue's 1.2 s).
func slowPromptLib(tb testing.TB, prompts bool, sleep string) string {
	tb.Helper()
	dir := tb.TempDir()
	src := "import time\n\n"
	for i := 0; i < 10; i++ {
		src += "def tool_t" + string(rune('0'+i)) + "(a: int, b: str = 'x'):\n    \"\"\"A tool.\n\n    Args:\n        a: a number\n        b: a text\n    \"\"\"\n    return a\n\n"
	}
	if prompts {
		src += "def tool_t0_prompt():\n    time.sleep(" + sleep + ")\n    return 'A tool whose description took a while.'\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "slow.py"), []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// mcpSession serves eng over in-memory transports to an SDK client and
// returns the client's session after its first tools/list.
func mcpSession(tb testing.TB, eng *lcp.Engine) *sdk.ClientSession {
	tb.Helper()
	srv := mcp.NewServer(eng, nil)
	tb.Cleanup(func() { srv.Close() })
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() { _ = srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil {
		tb.Fatal(err)
	}
	return cs
}

// TestSecondToolsListUsesCachedPrompts: an MCP client's later listings
// show the prompt function's text without running it again (a slow
// function would make them slow; bench/mcplist.sh measures them). The
// function sleeps briefly; the time limit is far from it.
func TestSecondToolsListUsesCachedPrompts(t *testing.T) {
	needPython(t)
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{slowPromptLib(t, true, "0.3")}, DynamicPrompts: true, Workspace: t.TempDir(),
		// Far from the run's real time: a worker's cold start on a busy
		// machine must not become the outcome.
		PromptTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	cs := mcpSession(t, eng)
	for i := 0; i < 3; i++ {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.Tools[0].Description != "A tool whose description took a while." {
			t.Fatalf("listing %d: %q", i+2, list.Tools[0].Description)
		}
	}
}

// BenchmarkMCPToolsList measures an MCP client's tools/list after the
// first one, on a library with a slow prompt function (cached) and on the
// same library without it (the reference). bench/mcplist.sh prints the
// ratio.
func BenchmarkMCPToolsList(b *testing.B) {
	for _, c := range []struct {
		name    string
		prompts bool
	}{{"reference", false}, {"cached_prompts", true}} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := exec.LookPath("python3"); err != nil {
				b.Skip("python3 is not installed")
			}
			eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{slowPromptLib(b, c.prompts, "1.2")}, DynamicPrompts: true, Workspace: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			cs := mcpSession(b, eng)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
