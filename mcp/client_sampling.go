//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on (SEP-2577), and still how servers of every revision borrow their client's model

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// sample answers a server's sampling request (sampling/createMessage, or
// an input request of an input_required result) with the model of the
// call it belongs to (tool.CallRequest.Generator, the host's model), after
// the person allowed it: the request is put to whoever drives the call as
// a confirmation showing the prompt. A request that belongs to no call,
// or to a call without a model, is refused.
func (r *remote) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	e, _ := ctx.Value(entryKey{}).(*callEntry)
	if e == nil {
		r.mu.Lock()
		if len(r.active) == 1 {
			for a := range r.active {
				e = a
			}
		}
		r.mu.Unlock()
	}
	if e == nil || e.call.Generator == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "lcp has no model to lend for this request"}
	}
	p := req.Params
	prompt, err := samplingPrompt(p)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	e.askMu.Lock()
	resp, err := e.call.Ask(e.runCtx, &tool.Request{
		Kind:   tool.KindConfirm,
		Title:  "Let the MCP server " + r.cfg.Alias + " ask the model",
		Label:  "ask the model for " + r.cfg.Alias,
		Source: prompt,
	})
	e.askMu.Unlock()
	if err != nil || resp.Action != tool.Submit {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the user declined the sampling request"}
	}
	if d, _ := resp.Value.(tool.Decision); d == tool.Reject {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the user declined the sampling request"}
	}
	opts := map[string]any{}
	if p.MaxTokens > 0 {
		opts["n_predict"] = p.MaxTokens
	}
	if p.SystemPrompt != "" {
		opts["system_prompt"] = p.SystemPrompt
	}
	if p.Temperature != 0 {
		opts["temperature"] = p.Temperature
	}
	if len(p.StopSequences) > 0 {
		opts["stop"] = p.StopSequences
	}
	raw, _ := json.Marshal(opts)
	text, err := e.call.Generator.GenerateJSON(e.runCtx, prompt, raw)
	if err != nil {
		return nil, fmt.Errorf("the model: %w", err)
	}
	return &sdk.CreateMessageResult{
		Role:       "assistant",
		Model:      "lcp",
		StopReason: "endTurn",
		Content:    &sdk.TextContent{Text: text},
	}, nil
}

// samplingPrompt is the text of a sampling request's messages, one per
// paragraph, the assistant's marked as such; only text can be lent.
func samplingPrompt(p *sdk.CreateMessageParams) (string, error) {
	if p == nil || len(p.Messages) == 0 {
		return "", errors.New("the sampling request has no message")
	}
	var parts []string
	for _, m := range p.Messages {
		if m == nil {
			return "", errors.New("the sampling request has an empty message")
		}
		t, ok := m.Content.(*sdk.TextContent)
		if !ok {
			return "", fmt.Errorf("lcp lends its model text only, not a %T block", m.Content)
		}
		if m.Role == "assistant" {
			parts = append(parts, "Assistant: "+t.Text)
		} else {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}
