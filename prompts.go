package lcp

import (
	"context"
	"fmt"

	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/tool"
)

// The engine is a tool.PromptSet: the libraries' system-prompt
// contributions (tool_<stem>_prompt), the prompts of its MCP servers
// ("<alias>::<prompt>") and the host's own (Config.Prompts), in that
// order, first name wins. lcp mcp serves them as MCP prompts.

// Prompts lists the engine's prompts. Listing runs the libraries' prompt
// functions.
func (e *Engine) Prompts(ctx context.Context) ([]tool.Prompt, error) { return e.prompts.Prompts(ctx) }

// GetPrompt renders one of the engine's prompts.
func (e *Engine) GetPrompt(ctx context.Context, name string, args map[string]string) (*tool.PromptResult, error) {
	return e.prompts.GetPrompt(ctx, name, args)
}

// CompletePrompt suggests values of a prompt's argument, where its source
// can (the host's prompts with a Complete, MCP servers that complete).
func (e *Engine) CompletePrompt(ctx context.Context, name, arg, value string, context map[string]string) ([]string, error) {
	if c, ok := e.prompts.(tool.PromptCompleter); ok {
		return c.CompletePrompt(ctx, name, arg, value, context)
	}
	return nil, nil
}

// libraryPrompts are the libraries' system-prompt contributions as
// prompts without arguments, named after their function.
type libraryPrompts struct{ b *binding.Binding }

func systemPromptName(p *tool.SystemPrompt) string { return "tool_" + p.Library + "_prompt" }

func (l libraryPrompts) Prompts(ctx context.Context) ([]tool.Prompt, error) {
	var out []tool.Prompt
	for _, p := range l.b.SystemPrompts(ctx) {
		out = append(out, tool.Prompt{
			Name:        systemPromptName(&p),
			Title:       "System prompt of " + p.Library,
			Description: fmt.Sprintf("What the tool library %s asks to add to the system prompt of an assistant that uses its tools.", p.Library),
		})
	}
	return out, nil
}

func (l libraryPrompts) GetPrompt(ctx context.Context, name string, _ map[string]string) (*tool.PromptResult, error) {
	for _, p := range l.b.SystemPrompts(ctx) {
		if systemPromptName(&p) == name {
			return &tool.PromptResult{
				Description: "The system prompt of the tool library " + p.Library,
				Messages:    []tool.PromptMessage{{Role: "user", Content: tool.TextContent(p.Text)}},
			}, nil
		}
	}
	return nil, fmt.Errorf("%w %q", tool.ErrUnknownPrompt, name)
}
