package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// fromMCP normalizes the result of an MCP tool like any other tool's
// (SPEC §7 step 9): the structured content, when the server gave one, is
// the tool's value; otherwise the text blocks joined by newlines are (or,
// without text, a placeholder of each block); a result marked isError is
// a failure whose error is its text. A result that is more than one text
// block keeps its blocks, in order, in Result.Content, so that lcp mcp
// passes them on unchanged and front ends can show them. A block lcp
// cannot carry is an error.
func fromMCP(res *sdk.CallToolResult) (*tool.Result, error) {
	blocks := make([]tool.Content, 0, len(res.Content))
	for i, c := range res.Content {
		b, err := fromSDKContent(c)
		if err != nil {
			return nil, fmt.Errorf("content block %d of the result: %w", i, err)
		}
		blocks = append(blocks, b)
	}
	text := tool.TextOf(blocks)

	var raw json.RawMessage
	switch {
	case res.IsError:
		if text == "" {
			text = "The MCP tool reported an error."
		}
		raw, _ = json.Marshal(map[string]any{"success": false, "error": text})
	case res.StructuredContent != nil:
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		raw = b
	default:
		raw, _ = json.Marshal(text)
	}
	out, err := tool.Normalize(raw)
	if err != nil {
		return nil, err
	}
	if res.StructuredContent != nil && !res.IsError {
		out.Structured = raw
	}
	if len(blocks) > 1 || (len(blocks) == 1 && blocks[0].Type != tool.ContentText) {
		out.Content = blocks
	}
	return out, nil
}

// toMCP turns a result into what the MCP client gets. A result made of
// content blocks (Result.Content) gives those blocks, in order, unchanged;
// any other gives the text the LLM reads (Result.Text) as one text block.
// The tool's prompt_injection, when it has one, follows as a text block of
// its own, so that clients that feed every block to the model pass it on
// while the tool's own blocks stay exactly its output; isError marks a
// failure (and _meta "lcp/rejected" a refusal by the operator); tools
// that declare an output schema get the structured value.
// A block lcp cannot carry makes the result a failure that says so.
func toMCP(res *tool.Result, structured bool) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: !res.Success}
	if len(res.Content) > 0 {
		for i := range res.Content {
			c, err := toSDKContent(&res.Content[i])
			if err != nil {
				msg := fmt.Sprintf("The tool returned content lcp cannot carry: content block %d: %v", i, err)
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
			}
			out.Content = append(out.Content, c)
		}
	} else {
		out.Content = append(out.Content, &sdk.TextContent{Text: res.Text()})
	}
	if pi := res.PromptInjection(); pi != "" {
		out.Content = append(out.Content, &sdk.TextContent{Text: pi})
	}
	// The engine's notes about the worker (the library's state was reset
	// after a crash, or reloaded after its files changed) are for the
	// client, not the model: they go to _meta.
	for key, note := range map[string]string{"_reloaded": "lcp/reloaded", "_state_reset": "lcp/state_reset"} {
		var text string
		if raw, ok := res.Payload[key]; ok && json.Unmarshal(raw, &text) == nil && text != "" {
			if out.Meta == nil {
				out.Meta = sdk.Meta{}
			}
			out.Meta[note] = text
		}
	}
	// A refusal by the operator reads as one where the client shows it;
	// the text the model reads stays the tool's own.
	if rejection := tool.RejectionOf(res); rejection != nil {
		if out.Meta == nil {
			out.Meta = sdk.Meta{}
		}
		out.Meta["lcp/rejected"] = rejection.String()
	}
	if structured && res.Success {
		v := res.Structured
		if len(v) == 0 {
			v = res.Output
		}
		if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
			out.StructuredContent = json.RawMessage(t)
		}
	}
	return out
}

// errorToMCP is the result an MCP client gets for an engine error (invalid
// arguments, a cancelled or timed-out call, a transport failure): a
// result marked isError, so that the model reads what went wrong.
func errorToMCP(err error) *sdk.CallToolResult {
	return toMCP(tool.ErrorResult(err), false)
}
