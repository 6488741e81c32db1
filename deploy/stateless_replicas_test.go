//go:build linux

package deploy_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/servetest"
)

// appendThenAsk is a tool with a side effect before its question: served
// by replaying the call, it would append once per round.
const appendThenAsk = `
def tool_append_then_ask(path: str, user_interaction_handler=None):
    """Appends a line to a file, then asks who did it.

    Args:
        path: the file
    """
    with open(path, "a") as f:
        f.write("appended\n")
    who = user_interaction_handler({"type": "text", "title": "Name", "prompt": "Who?"})
    if who is None:
        return {"success": False, "error": "nobody answered"}
    return {"success": True, "output": "by " + who}
`

// TestStatelessReplicasKeepCallsLive: three stateless replicas that know
// each other (--replica) behind round-robin nginx (deploy/nginx.conf's
// upstream for requests without a session); 2026-07-28 clients call a
// Python tool that appends to a file and then asks. Each call is kept
// live on the replica that started it, the retries that reach another
// replica are forwarded there, and the file gets one line per call.
func TestStatelessReplicasKeepCallsLive(t *testing.T) {
	if _, err := servetest.NginxPath(); err != nil {
		t.Skipf("skipping the replica test: %v", err)
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("skipping the replica test: python3 is not installed")
	}
	dir := t.TempDir()
	ctx := context.Background()
	bin, err := servetest.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(dir, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "append.py"), []byte(appendThenAsk), 0o644); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 3 {
		port, err := servetest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for i, addr := range addrs {
		args := []string{"mcp", "--http", addr, "--tools", tools, "--token", token, "--stateless", "--replica-id", fmt.Sprintf("r%d", i+1)}
		for j, other := range addrs {
			if j != i {
				args = append(args, "--replica", fmt.Sprintf("r%d=http://%s/mcp", j+1, other))
			}
		}
		p, err := servetest.Start(bin, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Kill)
	}
	recipe, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	port, _ := servetest.FreePort()
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	conf, err := servetest.RenderConfig(string(recipe), listen, addrs)
	if err != nil {
		t.Fatal(err)
	}
	ngx, err := servetest.StartNginx(t.TempDir(), conf, listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ngx.Stop)

	file := filepath.Join(dir, "log")
	elicit := func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stateless-client", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: elicit}).
		Connect(cctx, &sdk.StreamableClientTransport{Endpoint: "http://" + listen + "/mcp", HTTPClient: &http.Client{Transport: bearer{}}},
			&sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const calls = 6
	for k := range calls {
		res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_append_then_ask", Arguments: map[string]any{"path": file}})
		if err != nil {
			t.Fatalf("call %d: %v\nnginx: %s", k, err, ngx.ErrorLog())
		}
		if res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "by Ada") {
			t.Fatalf("call %d: %+v", k, res)
		}
	}
	b, _ := os.ReadFile(file)
	if n := strings.Count(string(b), "appended"); n != calls {
		t.Errorf("%d calls appended %d lines", calls, n)
	}
}
