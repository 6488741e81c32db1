//lint:file-ignore SA1019 the tests ask for and answer sampling and roots as clients of both wires still do (deprecated from 2026-07-28 on, SEP-2577)

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// surveyRequests are the three requests of the "survey" tool and prompt.
func surveyRequests() map[string]sdk.InputRequest {
	return map[string]sdk.InputRequest{
		"name": &sdk.ElicitParams{Message: "Name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		"greeting": &sdk.CreateMessageParams{MaxTokens: 20,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hello"}}}},
		"roots": &sdk.ListRootsParams{},
	}
}

// surveyText reads the answers to surveyRequests.
func surveyText(got map[string]sdk.InputResponse) (string, error) {
	name, _ := got["name"].(*sdk.ElicitResult)
	greeting, _ := got["greeting"].(*sdk.CreateMessageResult)
	roots, _ := got["roots"].(*sdk.ListRootsResult)
	if name == nil || greeting == nil || roots == nil {
		return "", fmt.Errorf("answers of the wrong kind: %T %T %T", got["name"], got["greeting"], got["roots"])
	}
	text, _ := greeting.Content.(*sdk.TextContent)
	if text == nil || len(roots.Roots) == 0 {
		return "", errors.New("no greeting text or no root")
	}
	return fmt.Sprintf("%v: %s (%s)", name.Content["name"], text.Text, roots.Roots[0].URI), nil
}

// surveyServer serves the "survey" tool, which appends a line to file and
// then asks the client three things at once, and the "survey" prompt,
// which asks the same.
func surveyServer(t *testing.T, file string) *Server {
	t.Helper()
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	survey, err := native.Func(tool.Info{Name: "survey", Description: "Appends, then asks the client three things.", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			fmt.Fprintln(f, "appended")
			f.Close()
			got, err := AskClient(ctx, surveyRequests())
			if err != nil {
				return nil, err
			}
			return surveyText(got)
		})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, survey)
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := tool.NewPrompts(tool.PromptDef{
		Prompt: tool.Prompt{Name: "survey", Description: "Asks the client three things."},
		Get: func(ctx context.Context, _ map[string]string) (*tool.PromptResult, error) {
			got, err := AskClient(ctx, surveyRequests())
			if err != nil {
				return nil, err
			}
			text, err := surveyText(got)
			if err != nil {
				return nil, err
			}
			return &tool.PromptResult{Messages: []tool.PromptMessage{{Role: "user", Content: tool.TextContent(text)}}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(ts, &ServerOptions{Prompts: prompts})
	t.Cleanup(func() { srv.Close() })
	return srv
}

// askingClient is a 2026-07-28 client declaring caps that handles
// input-required results itself.
func askingClient(t *testing.T, url string, caps *sdk.ClientCapabilities) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "asking-client", Version: "1"}, &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		Capabilities:   caps,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withHeader{"Authorization", "Bearer t"}}}
	cs, err := c.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var allCaps = &sdk.ClientCapabilities{
	Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
	Sampling:    &sdk.SamplingCapabilities{},
	RootsV2:     &sdk.RootCapabilities{},
}

func surveyAnswers() sdk.InputResponseMap {
	return sdk.InputResponseMap{
		"name":     &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}},
		"greeting": &sdk.CreateMessageResult{Role: "assistant", Model: "m", Content: &sdk.TextContent{Text: "hello"}},
		"roots":    &sdk.ListRootsResult{Roots: []*sdk.Root{{URI: "file:///work", Name: "work"}}},
	}
}

func keysOf[V any](m map[string]V) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// TestAskClientOneRound: on the 2026-07-28 wire the three requests come in
// one input_required result; a retry that answers one of them gets the
// other two asked again under the same state; the retry with the rest
// completes the call, which ran once.
func TestAskClientOneRound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	cs := askingClient(t, serveHTTP(t, surveyServer(t, file), nil), allCaps)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(state string, answers sdk.InputResponseMap) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "survey", Arguments: map[string]any{}, RequestState: state, InputResponses: answers})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r1 := call("", nil)
	if !r1.NeedsInput() || keysOf(r1.InputRequests) != "greeting,name,roots" || r1.RequestState == "" {
		t.Fatalf("round 1: want the three requests and a state, got %+v", r1)
	}
	all := surveyAnswers()
	r2 := call(r1.RequestState, sdk.InputResponseMap{"name": all["name"]})
	if !r2.NeedsInput() || keysOf(r2.InputRequests) != "greeting,roots" {
		t.Fatalf("after a partial answer: want greeting and roots asked again, got %+v", r2)
	}
	r3 := call(r2.RequestState, sdk.InputResponseMap{"greeting": all["greeting"], "roots": all["roots"]})
	if r3.NeedsInput() || r3.IsError {
		t.Fatalf("want the call's result, got %+v", r3)
	}
	if got := textOf(t, r3); got != "Ada: hello (file:///work)" {
		t.Errorf("result %q", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "appended\n" {
		t.Errorf("the tool ran %d times", strings.Count(string(b), "appended"))
	}
}

// TestAskClientMissingCapability: a client that declared no roots gets
// none of the requests; the tool fails saying what is missing.
func TestAskClientMissingCapability(t *testing.T) {
	caps := &sdk.ClientCapabilities{Elicitation: allCaps.Elicitation, Sampling: allCaps.Sampling}
	cs := askingClient(t, serveHTTP(t, surveyServer(t, filepath.Join(t.TempDir(), "log")), nil), caps)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "survey", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsInput() || !res.IsError || !strings.Contains(textOf(t, res), "roots") {
		t.Errorf("want a failure naming roots, got %+v", res)
	}
}

// TestAskClientPrompt: a prompt asks ephemerally on the 2026-07-28 wire:
// prompts/get returns what it lacks, answers for other keys change
// nothing, and the retry with the answers gets the messages.
func TestAskClientPrompt(t *testing.T) {
	cs := askingClient(t, serveHTTP(t, surveyServer(t, filepath.Join(t.TempDir(), "log")), nil), allCaps)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := surveyAnswers()
	for _, tc := range []struct {
		name    string
		answers sdk.InputResponseMap
		missing string
	}{
		{"no answers", nil, "greeting,name,roots"},
		{"an answer never asked for", sdk.InputResponseMap{"other": all["name"]}, "greeting,name,roots"},
		{"an answer of the wrong kind", sdk.InputResponseMap{"name": all["roots"], "greeting": all["greeting"]}, "name,roots"},
		{"all answers", all, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "survey", InputResponses: tc.answers})
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(res.InputRequests); got != tc.missing {
				t.Errorf("asked for %q, want %q", got, tc.missing)
			}
			if tc.missing != "" {
				return
			}
			if len(res.Messages) != 1 {
				t.Fatalf("messages %+v", res.Messages)
			}
			if tc, _ := res.Messages[0].Content.(*sdk.TextContent); tc == nil || tc.Text != "Ada: hello (file:///work)" {
				t.Errorf("message %+v", res.Messages[0].Content)
			}
		})
	}
}

// TestAskClientOldWire: on the 2025-11-25 wire the requests go to the
// client's session, for a tool call and for a prompt.
func TestAskClientOldWire(t *testing.T) {
	url := serveHTTP(t, surveyServer(t, filepath.Join(t.TempDir(), "log")), nil)
	c := sdk.NewClient(&sdk.Implementation{Name: "old-client", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Model: "m", Content: &sdk.TextContent{Text: "hello"}}, nil
		},
	})
	c.AddRoots(&sdk.Root{URI: "file:///work", Name: "work"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "survey", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "Ada: hello (file:///work)" {
		t.Errorf("tool result %q", got)
	}
	pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "survey"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Messages) != 1 {
		t.Fatalf("prompt messages %+v", pr.Messages)
	}
	if tc, _ := pr.Messages[0].Content.(*sdk.TextContent); tc == nil || tc.Text != "Ada: hello (file:///work)" {
		t.Errorf("prompt message %+v", pr.Messages[0].Content)
	}
}

// TestAskClientBadRequests: AskClient outside a served request, with a
// bad key or a request of another kind, refuses before asking.
func TestAskClientBadRequests(t *testing.T) {
	asked := false
	ctx := withClientAsker(context.Background(), func(context.Context, sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		asked = true
		return sdk.InputResponseMap{}, nil
	})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		reqs map[string]sdk.InputRequest
		want string
	}{
		{"no client", context.Background(), surveyRequests(), "no MCP client"},
		{"empty key", ctx, map[string]sdk.InputRequest{"": &sdk.ListRootsParams{}}, "1 to 128"},
		{"long key", ctx, map[string]sdk.InputRequest{strings.Repeat("k", 129): &sdk.ListRootsParams{}}, "1 to 128"},
		{"key with a space", ctx, map[string]sdk.InputRequest{"a b": &sdk.ListRootsParams{}}, "only letters"},
		{"another kind of request", ctx, map[string]sdk.InputRequest{"x": &sdk.CreateMessageWithToolsParams{}}, "not an elicitation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AskClient(tc.ctx, tc.reqs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if asked {
		t.Error("a refused request reached the client")
	}
}
