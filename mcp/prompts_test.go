//lint:file-ignore SA1019 the tests answer sampling as clients still do (SEP-2577 deprecates it from 2026-07-28 on)

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

func testPrompts(t *testing.T) *tool.PromptList {
	t.Helper()
	text := func(s string) *tool.PromptResult {
		return &tool.PromptResult{Messages: []tool.PromptMessage{{Role: "user", Content: tool.TextContent(s)}}}
	}
	l, err := tool.NewPrompts(
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "plan", Title: "Plan a trip", Description: "Plans a trip to a city.",
				Arguments: []tool.PromptArgument{{Name: "city", Description: "where to", Required: true}, {Name: "days"}}},
			Get: func(_ context.Context, args map[string]string) (*tool.PromptResult, error) {
				return text(fmt.Sprintf("Plan %s days in %s.", args["days"], args["city"])), nil
			},
			Complete: func(_ context.Context, arg, value string, _ map[string]string) ([]string, error) {
				var out []string
				for _, c := range []string{"Paris", "Parma", "Porto", "Lyon"} {
					if arg == "city" && strings.HasPrefix(c, value) {
						out = append(out, c)
					}
				}
				return out, nil
			},
		},
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "up::look", Description: "Shows a picture (a prompt of an upstream server)."},
			Get: func(context.Context, map[string]string) (*tool.PromptResult, error) {
				return &tool.PromptResult{Description: "a picture", Messages: []tool.PromptMessage{
					{Role: "user", Content: tool.ImageContent(png, "image/png")},
					{Role: "assistant", Content: tool.ResourceContent("test://note", "text/plain", "noted")},
				}}, nil
			},
		},
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "broken", Description: "Fails."},
			Get: func(context.Context, map[string]string) (*tool.PromptResult, error) {
				return nil, errors.New("the template is missing")
			},
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestServerPrompts(t *testing.T) {
	srv := NewServer(testInventory(t), &ServerOptions{Prompts: testPrompts(t)})
	t.Cleanup(func() { srv.Close() })
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := context.Background()
			cs := goClient(t, tr.connect(t, srv), "2025-11-25", nil, nil, nil)
			if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || caps.Completions == nil {
				t.Fatalf("capabilities = %+v, want prompts and completions", caps)
			}
			list, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range list.Prompts {
				names = append(names, p.Name)
			}
			if want := []string{"plan", "up__look", "broken"}; !slices.Equal(names, want) {
				t.Fatalf("prompts = %v, want %v", names, want)
			}
			if list.CacheScope != "public" {
				t.Errorf("cacheScope = %q, want public (never empty)", list.CacheScope)
			}
			if p := list.Prompts[0]; p.Title != "Plan a trip" || len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required {
				t.Errorf("plan = %+v", p)
			}

			got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "plan", Arguments: map[string]string{"city": "Porto", "days": "3"}})
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := got.Messages[0].Content.(*sdk.TextContent); !ok || tc.Text != "Plan 3 days in Porto." || got.Messages[0].Role != "user" {
				t.Errorf("plan = %+v", got.Messages[0])
			}
			look, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "up__look"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := look.Messages[0].Content.(*sdk.ImageContent); !ok || look.Messages[1].Role != "assistant" || look.Description != "a picture" {
				t.Errorf("look = %+v", look)
			}
			if _, ok := look.Messages[1].Content.(*sdk.EmbeddedResource); !ok {
				t.Errorf("look's second message is %T", look.Messages[1].Content)
			}

			for _, bad := range []struct {
				name string
				args map[string]string
				code int64
				msg  string
			}{
				{"plan", nil, jsonrpc.CodeInvalidParams, "city"},
				{"nope", nil, jsonrpc.CodeInvalidParams, "unknown prompt"},
				{"broken", nil, jsonrpc.CodeInternalError, "the template is missing"},
			} {
				_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: bad.name, Arguments: bad.args})
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != bad.code || !strings.Contains(rpc.Message, bad.msg) {
					t.Errorf("%s: %v, want code %d with %q", bad.name, err, bad.code, bad.msg)
				}
			}

			comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "plan"},
				Argument: sdk.CompleteParamsArgument{Name: "city", Value: "Par"}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(comp.Completion.Values, []string{"Paris", "Parma"}) || comp.Completion.Total != 2 {
				t.Errorf("completion = %+v", comp.Completion)
			}
			comp, err = cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "broken"},
				Argument: sdk.CompleteParamsArgument{Name: "x", Value: ""}})
			if err != nil || comp.Completion.Values == nil || len(comp.Completion.Values) != 0 {
				t.Errorf("completion of a prompt without a completer = %+v, %v", comp, err)
			}
		})
	}
}

// TestServerWithoutPrompts: a server given no prompts declares none.
func TestServerWithoutPrompts(t *testing.T) {
	srv := newTestServer(t, nil)
	cs := goClient(t, transports[0].connect(t, srv), "2025-11-25", nil, nil, nil)
	if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil || caps.Completions != nil {
		t.Errorf("capabilities = %+v", caps)
	}
}

func TestServerResources(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(srv.AddResource(Resource{URI: "test://text", Name: "text", MIMEType: "text/plain",
		Read: func(context.Context, string) ([]tool.Content, error) {
			return []tool.Content{tool.ResourceContent("", "text/plain", "hello")}, nil
		}}))
	must(srv.AddResource(Resource{URI: "test://png", MIMEType: "image/png",
		Read: func(context.Context, string) ([]tool.Content, error) {
			return []tool.Content{tool.BlobContent("", "image/png", png)}, nil
		}}))
	must(srv.AddResourceTemplate(Resource{URI: "test://items/{id}", Name: "item",
		Read: func(_ context.Context, uri string) ([]tool.Content, error) {
			id := strings.TrimPrefix(uri, "test://items/")
			if id == "0" {
				return nil, fmt.Errorf("item 0: %w", ErrResourceNotFound)
			}
			return []tool.Content{tool.ResourceContent("", "application/json", `{"id":"`+id+`"}`)}, nil
		},
		Complete: func(_ context.Context, variable, value string, _ map[string]string) ([]string, error) {
			return []string{value + "1", value + "2"}, nil
		}}))
	for _, bad := range []Resource{{URI: "relative", Read: func(context.Context, string) ([]tool.Content, error) { return nil, nil }}, {URI: "test://x"}} {
		if err := srv.AddResource(bad); err == nil {
			t.Errorf("AddResource(%q): no error", bad.URI)
		}
	}

	var mu sync.Mutex
	var updated []string
	c := sdk.NewClient(&sdk.Implementation{Name: "sub", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			updated = append(updated, r.Params.URI)
			mu.Unlock()
		}})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: serveHTTP(t, srv, nil)}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	must(err)
	t.Cleanup(func() { cs.Close() })
	if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
		t.Fatalf("resources capability = %+v", r)
	}
	list, err := cs.ListResources(ctx, nil)
	must(err)
	names := map[string]string{}
	for _, r := range list.Resources {
		names[r.URI] = r.Name
	}
	if len(names) != 2 || names["test://png"] != "test://png" || names["test://text"] != "text" {
		t.Errorf("resources = %v (a resource's name defaults to its URI)", names)
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://text"})
	must(err)
	if c := read.Contents[0]; c.Text != "hello" || c.URI != "test://text" || c.MIMEType != "text/plain" {
		t.Errorf("text = %+v", c)
	}
	read, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://png"})
	must(err)
	if c := read.Contents[0]; string(c.Blob) != string(png) {
		t.Errorf("png = %+v", c)
	}
	read, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://items/42"})
	must(err)
	if c := read.Contents[0]; c.Text != `{"id":"42"}` || c.URI != "test://items/42" {
		t.Errorf("item = %+v", c)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://items/0"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("item 0: %v", err)
	}
	comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "test://items/{id}"},
		Argument: sdk.CompleteParamsArgument{Name: "id", Value: "4"}})
	if err == nil {
		t.Errorf("completion without prompts = %+v (the server declares no completions)", comp)
	}

	must(cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://items/7"}))
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://elsewhere"}); err == nil {
		t.Error("subscribing to an unknown resource: no error")
	}
	must(srv.ResourceUpdated(ctx, "test://items/7"))
	if !eventually(func() bool { mu.Lock(); defer mu.Unlock(); return len(updated) == 1 }) {
		t.Errorf("updates = %v", updated)
	}
	must(cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "test://items/7"}))
	must(srv.ResourceUpdated(ctx, "test://items/7"))
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if len(updated) != 1 {
		t.Errorf("updates after unsubscribing = %v", updated)
	}
	mu.Unlock()
}

// samplingInventory has a native omni-tool that asks the call's model.
func samplingInventory(t *testing.T) *native.Toolset {
	t.Helper()
	ask, err := native.Func(tool.Info{Name: "ask_model", Description: "Asks the language model."}, func(ctx context.Context, args map[string]any) (any, error) {
		q, _ := args["question"].(string)
		return tool.Generate(ctx, q, []byte(`{"n_predict":50,"temperature":0.2,"system_prompt":"Be brief.","model":"fast"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, ask)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestServerLendsTheClientsModel(t *testing.T) {
	srv := NewServer(samplingInventory(t), nil)
	t.Cleanup(func() { srv.Close() })
	var seen *sdk.CreateMessageParams
	c := sdk.NewClient(&sdk.Implementation{Name: "sampler", Version: "1"}, &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			seen = r.Params
			return &sdk.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &sdk.TextContent{Text: "Forty-two."}}, nil
		}})
	ctx := context.Background()
	for _, tr := range transports {
		for _, pr := range protocols {
			t.Run(tr.name+"/"+pr.name, func(t *testing.T) {
				seen = nil
				cs, err := c.Connect(ctx, tr.connect(t, srv), &sdk.ClientSessionOptions{ProtocolVersion: pr.version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res := call(t, cs, "ask_model", map[string]any{"question": "What is the answer?"})
				if res.IsError || textOf(t, res) != "Forty-two." {
					t.Fatalf("ask_model = %s", textOf(t, res))
				}
				m := seen.Messages[0].Content.(*sdk.TextContent)
				if m.Text != "What is the answer?" || seen.MaxTokens != 50 || seen.Temperature != 0.2 || seen.SystemPrompt != "Be brief." ||
					seen.ModelPreferences == nil || len(seen.ModelPreferences.Hints) != 1 || seen.ModelPreferences.Hints[0].Name != "fast" {
					t.Errorf("the client was asked %+v (%q)", seen, m.Text)
				}
			})
		}
	}
	// A client that offers no sampling lends no model: the tool is told.
	cs := goClient(t, transports[0].connect(t, srv), "2025-11-25", nil, nil, nil)
	res := call(t, cs, "ask_model", map[string]any{"question": "?"})
	if !res.IsError || !strings.Contains(textOf(t, res), "no language model") {
		t.Errorf("without sampling: %+v", res)
	}
}

// TestPromptsAreReServed: the prompts of an upstream server reach an
// inventory through lcp's client, and lcp's server serves them again.
func TestPromptsAreReServed(t *testing.T) {
	ctx := context.Background()
	up := NewServer(testInventory(t), &ServerOptions{Prompts: testPrompts(t)})
	t.Cleanup(func() { up.Close() })
	c := newClient(t, []ServerConfig{{Alias: "up", Type: TypeHTTP, URL: serveHTTP(t, up, nil)}}, nil)
	list, err := c.Prompts(ctx)
	if err != nil || len(list) != 3 || list[0].Name != "up::plan" || list[1].Name != "up::up__look" {
		t.Fatalf("prompts = %+v, %v", list, err)
	}
	front := NewServer(c, &ServerOptions{Prompts: c})
	t.Cleanup(func() { front.Close() })
	cs := goClient(t, &sdk.StreamableClientTransport{Endpoint: serveHTTP(t, front, nil)}, "2025-11-25", nil, nil, nil)
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "up__plan", Arguments: map[string]string{"city": "Lyon", "days": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, _ := got.Messages[0].Content.(*sdk.TextContent); tc == nil || tc.Text != "Plan 2 days in Lyon." {
		t.Errorf("re-served plan = %+v", got.Messages[0].Content)
	}
	comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "up__plan"},
		Argument: sdk.CompleteParamsArgument{Name: "city", Value: "Po"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"Porto"}) {
		t.Errorf("re-served completion = %+v, %v", comp, err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "up__plan"}); err == nil || !strings.Contains(err.Error(), "city") {
		t.Errorf("without its city: %v", err)
	}
}

func TestPromptCompleteSetsResultType(t *testing.T) {
	for _, res := range []*sdk.GetPromptResult{
		{},
		{Description: "d", Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}},
	} {
		b, err := json.Marshal(promptComplete(res))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got["resultType"] != "complete" {
			t.Errorf("%s: no resultType complete", b)
		}
		if res.Description != "" && got["description"] != res.Description {
			t.Errorf("%s: description lost", b)
		}
	}
}
