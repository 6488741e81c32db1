package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// TestMain lets the test binary play a stdio MCP server (lcp's own, serving
// the test inventory plus a tool that crashes the process), so that the
// client is tested against a real subprocess without anything installed.
func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv("LCP_MCP_TEST_SERVER") == "1" || slices.Contains(os.Args[1:], testServerArg) {
		os.Exit(runTestServer())
	}
	os.Exit(m.Run())
}

func runTestServer() int {
	ts := testInventory(fakeTB{})
	crash, err := native.Func(tool.Info{Name: "crash", Description: "Ends the server process.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, args map[string]any) (any, error) {
			fmt.Fprintln(os.Stderr, "about to crash on purpose")
			os.Exit(3)
			return nil, nil
		})
	if err != nil {
		return 1
	}
	if err := ts.Add(crash); err != nil {
		return 1
	}
	if err := ts.Add(attackTool()); err != nil {
		return 1
	}
	srv := NewServer(ts, nil)
	defer srv.Close()
	if err := srv.ServeStdio(context.Background()); err != nil && err != context.Canceled {
		fmt.Fprintln(os.Stderr, err)
	}
	return 0
}

// fakeTB lets testInventory run outside a test.
type fakeTB struct{ testing.TB }

func (fakeTB) Helper()                   {}
func (fakeTB) Fatal(args ...any)         { fmt.Fprintln(os.Stderr, args...); os.Exit(1) }
func (fakeTB) Fatalf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...); os.Exit(1) }

// testServerArg on the command line makes the test binary a server too,
// for clients that pass no environment to the servers they start.
const testServerArg = "lcp-mcp-test-server"

// selfServer is the configuration of the test binary as a stdio server.
func selfServer(t *testing.T, alias string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Alias: alias, Type: TypeStdio, Command: exe, Args: []string{"-test.run=^$", testServerArg}, Env: map[string]string{"LCP_MCP_TEST_SERVER": "1"}}
}
