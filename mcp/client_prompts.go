package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// The prompts of the servers: a ClientToolset is a tool.PromptSet and a
// tool.PromptCompleter, so that an inventory (and lcp mcp, which serves
// it) offers the prompts of its MCP servers, named "<alias>::<prompt>"
// like their tools.

// Prompts lists the prompts of every server that offers some, in the
// order of the configuration. A server that is down or fails to list
// them contributes none.
func (c *ClientToolset) Prompts(ctx context.Context) ([]tool.Prompt, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	var out []tool.Prompt
	for _, r := range c.servers {
		list, err := r.prompts(ctx)
		if err != nil {
			c.opts.Logger.Warn("listing the prompts of an MCP server", "server", r.cfg.Alias, "error", err)
			continue
		}
		out = append(out, list...)
	}
	return out, nil
}

// GetPrompt gets the prompt "<alias>::<prompt>" from its server.
func (c *ClientToolset) GetPrompt(ctx context.Context, name string, args map[string]string) (*tool.PromptResult, error) {
	r, pname, p, err := c.findPrompt(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := tool.CheckPromptArguments(p, args); err != nil {
		return nil, err
	}
	s, err := r.session(ctx, false)
	if err != nil {
		return nil, err
	}
	res, err := s.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: pname, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: prompt %s: %w", r.cfg.Alias, pname, err)
	}
	out := &tool.PromptResult{Description: res.Description}
	for i, m := range res.Messages {
		content, err := fromSDKContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: prompt %s: message %d: %w", r.cfg.Alias, pname, i, err)
		}
		out.Messages = append(out.Messages, tool.PromptMessage{Role: string(m.Role), Content: content})
	}
	return out, nil
}

// CompletePrompt asks the prompt's server to complete an argument, when
// the server offers completion.
func (c *ClientToolset) CompletePrompt(ctx context.Context, name, arg, value string, context map[string]string) ([]string, error) {
	r, pname, _, err := c.findPrompt(ctx, name)
	if err != nil {
		return nil, err
	}
	s, err := r.session(ctx, false)
	if err != nil {
		return nil, err
	}
	if init := s.cs.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Completions == nil {
		return nil, nil
	}
	p := &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: pname}, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}}
	if len(context) > 0 {
		p.Context = &sdk.CompleteContext{Arguments: context}
	}
	res, err := s.cs.Complete(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: completing %s of prompt %s: %w", r.cfg.Alias, arg, pname, err)
	}
	return res.Completion.Values, nil
}

// findPrompt returns the server of a prompt and the prompt as listed.
func (c *ClientToolset) findPrompt(ctx context.Context, name string) (*remote, string, *tool.Prompt, error) {
	if err := c.checkOpen(); err != nil {
		return nil, "", nil, err
	}
	alias, pname, ok := strings.Cut(name, Separator)
	r := c.byAlias[alias]
	if !ok || r == nil {
		return nil, "", nil, fmt.Errorf("%w %q", tool.ErrUnknownPrompt, name)
	}
	list, err := r.prompts(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	for i := range list {
		if list[i].Name == name {
			return r, pname, &list[i], nil
		}
	}
	return nil, "", nil, fmt.Errorf("%w %q", tool.ErrUnknownPrompt, name)
}

// prompts lists the server's prompts, if it offers any.
func (r *remote) prompts(ctx context.Context) ([]tool.Prompt, error) {
	s, err := r.session(ctx, true)
	if err != nil {
		return nil, err
	}
	if init := s.cs.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Prompts == nil {
		return nil, nil
	}
	var out []tool.Prompt
	for p, err := range s.cs.Prompts(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing the prompts of MCP server %q: %w", r.cfg.Alias, err)
		}
		tp := tool.Prompt{Name: r.cfg.Alias + Separator + p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			tp.Arguments = append(tp.Arguments, tool.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		out = append(out, tp)
	}
	return out, nil
}
