package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// methodLog records the methods a Go SDK server receives.
type methodLog struct {
	mu      sync.Mutex
	methods []string
}

func (l *methodLog) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		l.mu.Lock()
		l.methods = append(l.methods, method)
		l.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (l *methodLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.methods)
}

// sdkPeer serves a Go SDK server over streamable HTTP (stateless when it
// speaks every revision; with sessions when versions narrow it to older
// ones, which ask through server requests), with a
// tool deploy that asks a confirmation form through an input_required
// result (SEP-2322) and checks that its request state comes back.
func sdkPeer(t *testing.T, versions []string) (string, *methodLog) {
	t.Helper()
	log := &methodLog{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1.0.0"}, &sdk.ServerOptions{SupportedProtocolVersions: versions})
	srv.AddReceivingMiddleware(log.middleware)
	schema := map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean", "title": "Go ahead?"}}, "required": []string{"ok"}}
	sdk.AddTool(srv, &sdk.Tool{Name: "deploy", Description: "Deploys after a confirmation."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			if req.Session.InitializeParams() != nil && req.Session.InitializeParams().ProtocolVersion < "2026-07-28" {
				// An older client: ask it the way it understands.
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Deploy?", RequestedSchema: schema})
				if err != nil {
					return nil, nil, err
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deployed: " + res.Action + " (elicitation)"}}}, nil, nil
			}
			return &sdk.CallToolResult{
				InputRequests: sdk.InputRequestMap{"confirm": &sdk.ElicitParams{Message: "Deploy?", RequestedSchema: schema}},
				RequestState:  "state-1",
			}, nil, nil
		}
		if req.Params.RequestState != "state-1" {
			return nil, nil, &json.UnsupportedValueError{Str: "request state " + req.Params.RequestState}
		}
		res, ok := req.Params.InputResponses["confirm"].(*sdk.ElicitResult)
		if !ok {
			return nil, nil, &json.UnsupportedValueError{Str: "no answer"}
		}
		b, _ := json.Marshal(res.Content)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deployed: " + res.Action + " " + string(b)}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: versions == nil})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, log
}

// TestClient2026Peer: lcp's client speaks 2026-07-28 to a server that
// does (server/discover, no initialize), and answers the server's
// input_required result through whoever drives the call (here a
// Respond function, as a hitl broker would be), retrying with the
// answers and the request state; against a server of 2025-11-25 only, it
// falls back to initialize and the same question arrives as an
// elicitation.
func TestClient2026Peer(t *testing.T) {
	cases := []struct {
		name     string
		versions []string
		want     string
		first    string // the first method the server receives
		never    string
	}{
		{"2026-07-28", nil, `deployed: accept {"ok":true}`, "server/discover", "initialize"},
		{"fallback to 2025-11-25", []string{"2025-11-25"}, "deployed: accept (elicitation)", "initialize", "server/discover"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, log := sdkPeer(t, c.versions)
			ct := newClient(t, []ServerConfig{{Alias: "peer", Type: TypeHTTP, URL: url}}, nil)
			var asked []*tool.Request
			var mu sync.Mutex
			res, err := tool.Call(context.Background(), ct, "peer"+Separator+"deploy", json.RawMessage(`{}`), &tool.CallOptions{
				Respond: func(_ context.Context, r *tool.Request) tool.Response {
					mu.Lock()
					asked = append(asked, r)
					mu.Unlock()
					return r.Submitted(map[string]any{"ok": true})
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			var out string
			if json.Unmarshal(res.Output, &out) != nil {
				out = string(res.Output)
			}
			if !res.Success || !strings.Contains(out, c.want) {
				t.Fatalf("result %+v, output %s; want %q", res, res.Output, c.want)
			}
			if len(asked) != 1 || asked[0].Kind != tool.KindForm || !strings.Contains(asked[0].Prompt+asked[0].Title, "Deploy?") {
				t.Errorf("asked %+v; want one form saying Deploy?", asked)
			}
			methods := log.seen()
			if len(methods) == 0 || methods[0] != c.first || slices.Contains(methods, c.never) {
				t.Errorf("the server received %v; want %s first and no %s", methods, c.first, c.never)
			}
		})
	}
}
