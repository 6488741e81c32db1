package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// This file serves ServerOptions.Prompts: prompts/list and prompts/get
// are answered from the prompt set on every request (its prompts may
// change, like the tools), and completion/complete from its completer
// and from the completers of resource templates.

// maxCompletions is MCP's limit on the values of one completion answer.
const maxCompletions = 100

// promptNames maps the names clients call prompts by to the set's names:
// prompts of MCP servers ("alias::name") are served under their wire name
// (tool.WireNames), as tools are.
type promptNames struct {
	mu   sync.Mutex
	back map[string]string
}

func (n *promptNames) set(back map[string]string) {
	n.mu.Lock()
	n.back = back
	n.mu.Unlock()
}

func (n *promptNames) get(wire string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	name, ok := n.back[wire]
	return name, ok
}

// listPrompts answers prompts/list.
func (s *Server) listPrompts(ctx context.Context) (*sdk.ListPromptsResult, error) {
	list, err := s.opts.Prompts.Prompts(ctx)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "listing the prompts: " + err.Error()}
	}
	names := make([]string, len(list))
	for i := range list {
		names[i] = list[i].Name
	}
	wire, back := tool.WireNames(names)
	s.prompts.set(back)
	// cacheScope is required on the wire and "" is not a scope: say the
	// protocol's default, as the SDK does for the lists it builds itself.
	out := &sdk.ListPromptsResult{Prompts: make([]*sdk.Prompt, 0, len(list)), Cacheable: sdk.Cacheable{CacheScope: "public"}}
	for i, p := range list {
		sp := &sdk.Prompt{Name: wire[i], Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			sp.Arguments = append(sp.Arguments, &sdk.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		out.Prompts = append(out.Prompts, sp)
	}
	return out, nil
}

// promptName returns the set's name of the prompt clients call wire.
func (s *Server) promptName(ctx context.Context, wire string) string {
	if name, ok := s.prompts.get(wire); ok {
		return name
	}
	if _, err := s.listPrompts(ctx); err == nil { // a client that did not list first
		if name, ok := s.prompts.get(wire); ok {
			return name
		}
	}
	return wire
}

// servePrompt answers prompts/get, with the prompt's AskClient requests
// put to the client: through its session on the 2025-11-25 wire; on the
// 2026-07-28 wire ephemerally, as an input_required result of the
// requests the prompt has no answer for yet (no requestState: the retry
// runs the prompt again, answering from its inputResponses).
func (s *Server) servePrompt(ctx context.Context, req sdk.Request, p *sdk.GetPromptParams) (sdk.Result, error) {
	var caps *sdk.ClientCapabilities
	if gr, ok := req.(*sdk.GetPromptRequest); ok {
		caps = gr.ClientCapabilities()
	}
	if !newWire(req) {
		ss, _ := req.GetSession().(*sdk.ServerSession)
		return s.getPrompt(withClientAsker(ctx, sessionAsker(ss, caps)), p)
	}
	var asked sdk.InputRequestMap
	res, err := s.getPrompt(withClientAsker(ctx, ephemeralAsker(caps, p.InputResponses, &asked)), p)
	if asked != nil {
		return promptInputRequired(asked), nil
	}
	if err != nil {
		return nil, err
	}
	return promptComplete(res), nil
}

// getPrompt answers prompts/get.
func (s *Server) getPrompt(ctx context.Context, p *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	res, err := s.opts.Prompts.GetPrompt(ctx, s.promptName(ctx, p.Name), p.Arguments)
	if err != nil {
		return nil, promptError(p.Name, err)
	}
	out := &sdk.GetPromptResult{Description: res.Description, Messages: make([]*sdk.PromptMessage, 0, len(res.Messages))}
	for i, m := range res.Messages {
		c, err := toSDKContent(&m.Content)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %s: message %d: %v", p.Name, i, err)}
		}
		role := m.Role
		if role != "assistant" {
			role = "user"
		}
		out.Messages = append(out.Messages, &sdk.PromptMessage{Role: sdk.Role(role), Content: c})
	}
	return out, nil
}

// promptError is the JSON-RPC error of a prompt that cannot be got: an
// unknown name or missing arguments are the client's (invalid params),
// the rest the server's.
func promptError(name string, err error) error {
	var args *tool.PromptArgumentsError
	switch {
	case errors.Is(err, tool.ErrUnknownPrompt):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
	case errors.As(err, &args):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %s: %v", name, err)}
}

// complete answers completion/complete: prompt arguments from the prompt
// set's completer, variables of resource templates from their Complete.
// What cannot be completed gets no values.
func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	p := req.Params
	var context map[string]string
	if p.Context != nil {
		context = p.Context.Arguments
	}
	var (
		values []string
		err    error
	)
	switch p.Ref.Type {
	case "ref/prompt":
		if c, ok := s.opts.Prompts.(tool.PromptCompleter); ok {
			values, err = c.CompletePrompt(ctx, s.promptName(ctx, p.Ref.Name), p.Argument.Name, p.Argument.Value, context)
			if err != nil {
				return nil, promptError(p.Ref.Name, err)
			}
		}
	case "ref/resource":
		if r := s.resources.template(p.Ref.URI); r != nil && r.Complete != nil {
			if values, err = r.Complete(ctx, p.Argument.Name, p.Argument.Value, context); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown completion reference type %q", p.Ref.Type)}
	}
	out := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values, Total: len(values)}}
	if out.Completion.Values == nil {
		out.Completion.Values = []string{}
	}
	if len(values) > maxCompletions {
		out.Completion.Values, out.Completion.HasMore = values[:maxCompletions], true
	}
	return out, nil
}

// promptInputRequired is the input_required result of a prompt that
// asks the client for reqs (promptComplete says why through JSON).
func promptInputRequired(reqs sdk.InputRequestMap) *sdk.GetPromptResult {
	b, err := json.Marshal(&sdk.GetPromptResult{Messages: []*sdk.PromptMessage{}, InputRequests: reqs})
	out := &sdk.GetPromptResult{InputRequests: reqs}
	if err != nil || len(b) < 2 || b[0] != '{' {
		return out
	}
	b = append([]byte(`{"resultType":"input_required",`), b[1:]...)
	var typed sdk.GetPromptResult
	if json.Unmarshal(b, &typed) != nil {
		return out
	}
	return &typed
}

// promptComplete marks a prompt's result complete (resultType), as the
// 2026-07-28 revision requires of every result. The SDK sets it on the
// results of the handlers it runs; lcp answers prompts/get itself, and
// the field is settable only through the result's JSON.
func promptComplete(res *sdk.GetPromptResult) *sdk.GetPromptResult {
	b, err := json.Marshal(res)
	if err != nil || len(b) < 2 || b[0] != '{' {
		return res
	}
	if len(b) > 2 {
		b = append([]byte(`{"resultType":"complete",`), b[1:]...)
	} else {
		b = []byte(`{"resultType":"complete"}`)
	}
	var out sdk.GetPromptResult
	if json.Unmarshal(b, &out) != nil {
		return res
	}
	return &out
}
