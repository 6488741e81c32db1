package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// withHeader adds a header to every request, as a client with its own
// token does.
type withHeader struct{ key, value string }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// mrtrTools: "append" writes a line to a file, then asks for approval and
// a name; "greet" asks a question under a key of its own; "other" is
// another tool.
func mrtrTools(t *testing.T, file string) *native.Toolset {
	t.Helper()
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	appendTool, err := native.Func(tool.Info{Name: "append", Description: "Appends, then asks.", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			fmt.Fprintln(f, "appended")
			f.Close()
			d, _, err := tool.Confirm(ctx, "go on", "go on", nil)
			if err != nil {
				return nil, err
			}
			who, err := tool.AskText(ctx, "Name", "Who?", false)
			if err != nil {
				return nil, err
			}
			return string(d) + " by " + who, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	greet, err := native.Func(tool.Info{Name: "greet", Description: "Asks a name.", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			resp, err := tool.Ask(ctx, &tool.Request{ID: "user_name", Kind: tool.KindForm, Prompt: "Name?",
				Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return nil, err
			}
			v, _ := resp.Value.(map[string]any)
			return fmt.Sprintf("hello %v", v["name"]), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := native.Func(tool.Info{Name: "gate", Description: "Asks a confirmation under a key of its own.", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			resp, err := tool.Ask(ctx, &tool.Request{ID: "go", Kind: tool.KindConfirm, Source: "rm -rf", Label: "remove"})
			if err != nil {
				return nil, err
			}
			return fmt.Sprint(resp.Value), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	other, err := native.Func(tool.Info{Name: "other", Description: "Another tool.", InputSchema: noArgs},
		func(context.Context, map[string]any) (any, error) { return "other ran", nil })
	if err != nil {
		t.Fatal(err)
	}
	caps := tool.Capabilities{Confirm: true, Text: true, Form: true}
	ts, err := native.New(nil, appendTool.Interactive(caps), greet.Interactive(caps), gate.Interactive(caps), other)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// mrtrClient is a 2026-07-28 client that handles input-required results
// itself.
func mrtrClient(t *testing.T, url, auth string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "mrtr-client", Version: "1"}, &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withHeader{"Authorization", "Bearer " + auth}}}
	cs, err := c.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func onlyKey(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("want one input request and a state, got %+v", res)
	}
	for k := range res.InputRequests {
		return k
	}
	return ""
}

func wantInvalidParams(t *testing.T, what string, res *sdk.CallToolResult, err error, text string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, text) {
		t.Errorf("%s: want invalid params saying %q, got %+v, %v", what, text, res, err)
	}
}

// TestMRTRStateChecks: the call stays live between its rounds (what it
// did before asking is done once), and a requestState tampered with,
// brought by another caller, for another tool, or of a round already
// answered is refused with invalid params, the call untouched.
func TestMRTRStateChecks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	srv := NewServer(mrtrTools(t, file), nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, nil)
	a, b := mrtrClient(t, url, "token-a"), mrtrClient(t, url, "token-b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(cs *sdk.ClientSession, name, state string, answers sdk.InputResponseMap) (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: state, InputResponses: answers})
	}

	r1, err := call(a, "append", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	k1, s1 := onlyKey(t, r1), r1.RequestState
	allow := sdk.InputResponseMap{k1: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}}

	res, err := call(a, "append", s1+"x", allow)
	wantInvalidParams(t, "tampered", res, err, "altered")
	res, err = call(a, "append", strings.Replace(s1, s1[:8], "AAAAAAAA", 1), allow)
	wantInvalidParams(t, "forged", res, err, "requestState")
	res, err = call(b, "append", s1, allow)
	wantInvalidParams(t, "another caller", res, err, "another caller")
	res, err = call(a, "other", s1, allow)
	wantInvalidParams(t, "another tool", res, err, "another tool")

	r2, err := call(a, "append", s1, allow)
	if err != nil {
		t.Fatal(err)
	}
	k2, s2 := onlyKey(t, r2), r2.RequestState
	if s2 == s1 || k2 == k1 {
		t.Errorf("round 2 has the state or key of round 1")
	}
	res, err = call(a, "append", s1, allow)
	wantInvalidParams(t, "earlier round", res, err, "earlier round")

	// An answer for another key asks again.
	res, err = call(a, "append", s2, sdk.InputResponseMap{"nope": &sdk.ElicitResult{Action: "accept"}})
	if err != nil || onlyKey(t, res) != k2 {
		t.Fatalf("unanswered round: %+v, %v", res, err)
	}
	r3, err := call(a, "append", s2, sdk.InputResponseMap{k2: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, r3); got != "allow by Ada" {
		t.Errorf("result %q", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "appended\n" {
		t.Errorf("the tool's side effect happened %d times", strings.Count(string(b), "appended"))
	}
	res, err = call(a, "append", s2, sdk.InputResponseMap{k2: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}})
	wantInvalidParams(t, "ended call", res, err, "ended")
}

// TestMRTRPresetAnswers: a question whose key the client knows may be
// answered with the call itself; a confirmation never is.
func TestMRTRPresetAnswers(t *testing.T) {
	srv := NewServer(mrtrTools(t, filepath.Join(t.TempDir(), "log")), nil)
	t.Cleanup(func() { srv.Close() })
	cs := mrtrClient(t, serveHTTP(t, srv, nil), "t")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greet", Arguments: map[string]any{},
		InputResponses: sdk.InputResponseMap{"user_name": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, "extra": &sdk.ElicitResult{Action: "accept"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "hello Ada" {
		t.Errorf("preset answer: %q", got)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "gate", Arguments: map[string]any{},
		InputResponses: sdk.InputResponseMap{"go": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if onlyKey(t, res) != "go" {
		t.Errorf("confirmation keys: %v", res.InputRequests)
	}
}
