package tool_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

func greeting() tool.PromptDef {
	return tool.PromptDef{
		Prompt: tool.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []tool.PromptArgument{
			{Name: "who", Required: true}, {Name: "tone"},
		}},
		Get: func(_ context.Context, args map[string]string) (*tool.PromptResult, error) {
			text := "Say hello to " + args["who"]
			if t := args["tone"]; t != "" {
				text += ", " + t
			}
			return &tool.PromptResult{Messages: []tool.PromptMessage{{Role: "user", Content: tool.TextContent(text)}}}, nil
		},
		Complete: func(_ context.Context, arg, value string, _ map[string]string) ([]string, error) {
			var out []string
			for _, s := range []string{"Ada", "Alan", "Grace"} {
				if arg == "who" && strings.HasPrefix(s, value) {
					out = append(out, s)
				}
			}
			return out, nil
		},
	}
}

func TestPromptList(t *testing.T) {
	ctx := context.Background()
	l, err := tool.NewPrompts(greeting())
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.GetPrompt(ctx, "greet", map[string]string{"who": "Ada", "tone": "warmly"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content.Text; got != "Say hello to Ada, warmly" {
		t.Errorf("got %q", got)
	}
	var missing *tool.PromptArgumentsError
	if _, err := l.GetPrompt(ctx, "greet", nil); !errors.As(err, &missing) || !slices.Equal(missing.Missing, []string{"who"}) {
		t.Errorf("without who: %v", err)
	}
	if _, err := l.GetPrompt(ctx, "nope", nil); !errors.Is(err, tool.ErrUnknownPrompt) {
		t.Errorf("unknown: %v", err)
	}
	got, err := l.CompletePrompt(ctx, "greet", "who", "A", nil)
	if err != nil || !slices.Equal(got, []string{"Ada", "Alan"}) {
		t.Errorf("completion = %v, %v", got, err)
	}
	for _, bad := range [][]tool.PromptDef{
		{{Prompt: tool.Prompt{Name: "x"}}},
		{greeting(), greeting()},
		{{Prompt: tool.Prompt{Name: "bad name"}, Get: greeting().Get}},
	} {
		if _, err := tool.NewPrompts(bad...); err == nil {
			t.Errorf("NewPrompts(%v): no error", bad)
		}
	}
}

func TestComposePrompts(t *testing.T) {
	ctx := context.Background()
	first, _ := tool.NewPrompts(greeting())
	other := greeting()
	other.Description = "Another greeting."
	other.Complete = nil
	second, _ := tool.NewPrompts(other, tool.PromptDef{Prompt: tool.Prompt{Name: "bye"}, Get: other.Get})
	all := tool.ComposePrompts(nil, first, second)
	list, err := all.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Description != "Greets someone." || list[1].Name != "bye" {
		t.Errorf("prompts = %+v", list)
	}
	got, err := all.(tool.PromptCompleter).CompletePrompt(ctx, "greet", "who", "G", nil)
	if err != nil || !slices.Equal(got, []string{"Grace"}) {
		t.Errorf("completion = %v, %v (the first set's prompt)", got, err)
	}
	if _, err := all.GetPrompt(ctx, "nope", nil); !errors.Is(err, tool.ErrUnknownPrompt) {
		t.Errorf("unknown: %v", err)
	}
}

// A Go host registers a prompt with arguments; MCP clients get it from
// lcp's MCP server (mcp.ServerOptions.Prompts) or an engine
// (lcp.Config.Prompts).
func ExampleNewPrompts() {
	prompts, _ := tool.NewPrompts(tool.PromptDef{
		Prompt: tool.Prompt{
			Name:        "review",
			Description: "Asks for a code review of a file.",
			Arguments:   []tool.PromptArgument{{Name: "file", Description: "the file to review", Required: true}},
		},
		Get: func(_ context.Context, args map[string]string) (*tool.PromptResult, error) {
			return &tool.PromptResult{Messages: []tool.PromptMessage{
				{Role: "user", Content: tool.TextContent("Review " + args["file"] + " for bugs.")},
			}}, nil
		},
	})
	res, _ := prompts.GetPrompt(context.Background(), "review", map[string]string{"file": "main.go"})
	fmt.Println(res.Messages[0].Content.Text)
	// Output: Review main.go for bugs.
}
