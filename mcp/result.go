package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// fromMCP normalizes the result of an MCP tool like any other tool's
// (SPEC §7 step 9): the structured content, when the server gave one, is
// the tool's value; otherwise the text blocks joined by newlines are; a
// result marked isError is a failure whose error is its text. Images,
// audio, links and embedded binary resources go to Result.Content for
// front ends, and are named in the text when there is no other text.
func fromMCP(res *sdk.CallToolResult) (*tool.Result, error) {
	var (
		texts []string
		rich  []tool.Content
	)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			rich = append(rich, tool.Content{Type: "image", Data: c.Data, MIMEType: c.MIMEType})
		case *sdk.AudioContent:
			rich = append(rich, tool.Content{Type: "audio", Data: c.Data, MIMEType: c.MIMEType})
		case *sdk.ResourceLink:
			rich = append(rich, tool.Content{Type: "resource_link", URI: c.URI, Name: c.Name, MIMEType: c.MIMEType})
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Blob == nil {
				texts = append(texts, c.Resource.Text)
				continue
			}
			rich = append(rich, tool.Content{Type: "resource", URI: c.Resource.URI, MIMEType: c.Resource.MIMEType, Data: c.Resource.Blob})
		}
	}
	if len(texts) == 0 {
		for _, c := range rich {
			texts = append(texts, describeContent(c))
		}
	}
	text := strings.Join(texts, "\n")

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
	out.Content = rich
	return out, nil
}

func describeContent(c tool.Content) string {
	switch c.Type {
	case "resource_link":
		return fmt.Sprintf("[link %s]", c.URI)
	case "resource":
		return fmt.Sprintf("[resource %s, %s, %d bytes]", c.URI, c.MIMEType, len(c.Data))
	}
	return fmt.Sprintf("[%s %s, %d bytes]", c.Type, c.MIMEType, len(c.Data))
}

// toMCP turns a result into what the MCP client gets: the text the LLM
// reads (Result.Text) as the first text block; the tool's
// prompt_injection, when it has one, as a second text block, so that
// clients that feed every block to the model pass it on while the first
// block stays exactly the tool's output; rich content as image, audio
// and link blocks; isError on failure; and the structured value when the
// tool declares an output schema.
func toMCP(res *tool.Result, structured bool) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: !res.Success}
	out.Content = append(out.Content, &sdk.TextContent{Text: res.Text()})
	if pi := res.PromptInjection(); pi != "" {
		out.Content = append(out.Content, &sdk.TextContent{Text: pi})
	}
	for _, c := range res.Content {
		switch c.Type {
		case "image":
			out.Content = append(out.Content, &sdk.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
		case "audio":
			out.Content = append(out.Content, &sdk.AudioContent{Data: c.Data, MIMEType: c.MIMEType})
		case "resource_link":
			out.Content = append(out.Content, &sdk.ResourceLink{URI: c.URI, Name: c.Name, MIMEType: c.MIMEType})
		case "resource":
			out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Data}})
		}
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
