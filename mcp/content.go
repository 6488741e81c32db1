package mcp

import (
	"fmt"
	"maps"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// This file maps lcp's content blocks (tool.Content) to the SDK's and
// back, for tool results, prompts and resources alike. Nothing is dropped
// on the way: a block that has no counterpart is an error.

// toSDKContent returns the SDK block of c.
func toSDKContent(c *tool.Content) (sdk.Content, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	ann := toSDKAnnotations(c.Annotations)
	meta := sdk.Meta(maps.Clone(c.Meta))
	switch c.Type {
	case tool.ContentText:
		return &sdk.TextContent{Text: c.Text, Annotations: ann, Meta: meta}, nil
	case tool.ContentImage:
		return &sdk.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: ann, Meta: meta}, nil
	case tool.ContentAudio:
		return &sdk.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: ann, Meta: meta}, nil
	case tool.ContentResource:
		return &sdk.EmbeddedResource{Resource: toSDKResource(c), Annotations: ann, Meta: meta}, nil
	case tool.ContentResourceLink:
		name := c.Name
		if name == "" {
			name = c.URI
		}
		return &sdk.ResourceLink{URI: c.URI, Name: name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Annotations: ann, Meta: meta}, nil
	}
	return nil, fmt.Errorf("unknown content type %q", c.Type) // Check said so already
}

// toSDKResource returns the resource contents of an embedded resource.
func toSDKResource(c *tool.Content) *sdk.ResourceContents {
	r := &sdk.ResourceContents{URI: c.URI, MIMEType: c.MIMEType}
	if c.IsBlob() {
		r.Blob = c.Data
	} else {
		r.Text = c.Text
	}
	return r
}

// fromSDKContent returns lcp's block of an SDK block. Tool use and tool
// result blocks (sampling's) are not content a tool returns: an error.
func fromSDKContent(c sdk.Content) (tool.Content, error) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return tool.Content{Type: tool.ContentText, Text: c.Text, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta}, nil
	case *sdk.ImageContent:
		return tool.Content{Type: tool.ContentImage, Data: orEmpty(c.Data), MIMEType: c.MIMEType, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta}, nil
	case *sdk.AudioContent:
		return tool.Content{Type: tool.ContentAudio, Data: orEmpty(c.Data), MIMEType: c.MIMEType, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta}, nil
	case *sdk.ResourceLink:
		return tool.Content{Type: tool.ContentResourceLink, URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta}, nil
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return tool.Content{}, fmt.Errorf("an embedded resource without contents")
		}
		out := fromSDKResource(c.Resource)
		out.Annotations, out.Meta = fromSDKAnnotations(c.Annotations), c.Meta
		return out, nil
	case nil:
		return tool.Content{}, fmt.Errorf("an empty content block")
	}
	return tool.Content{}, fmt.Errorf("a %T block, which lcp does not carry", c)
}

// fromSDKResource returns the embedded resource block of resource
// contents.
func fromSDKResource(r *sdk.ResourceContents) tool.Content {
	if r.Blob != nil {
		return tool.BlobContent(r.URI, r.MIMEType, r.Blob)
	}
	return tool.ResourceContent(r.URI, r.MIMEType, r.Text)
}

func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func toSDKAnnotations(a *tool.ContentAnnotations) *sdk.Annotations {
	if a == nil {
		return nil
	}
	out := &sdk.Annotations{LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, sdk.Role(r))
	}
	if a.Priority != nil {
		out.Priority = *a.Priority
	}
	return out
}

func fromSDKAnnotations(a *sdk.Annotations) *tool.ContentAnnotations {
	if a == nil {
		return nil
	}
	out := &tool.ContentAnnotations{LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, string(r))
	}
	if a.Priority != 0 {
		p := a.Priority
		out.Priority = &p
	}
	return out
}

// toSDKToolAnnotations returns MCP's annotations of a tool, nil when it
// declares none.
func toSDKToolAnnotations(a *tool.Annotations) *sdk.ToolAnnotations {
	if a == nil {
		return nil
	}
	out := &sdk.ToolAnnotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
	if a.ReadOnlyHint != nil {
		out.ReadOnlyHint = *a.ReadOnlyHint
	}
	if a.IdempotentHint != nil {
		out.IdempotentHint = *a.IdempotentHint
	}
	return out
}

// fromSDKToolAnnotations returns the annotations of an MCP tool. MCP's
// readOnlyHint and idempotentHint are plain booleans whose false is also
// their default: false reads as unset.
func fromSDKToolAnnotations(a *sdk.ToolAnnotations) *tool.Annotations {
	if a == nil {
		return nil
	}
	out := &tool.Annotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
	yes := true
	if a.ReadOnlyHint {
		out.ReadOnlyHint = &yes
	}
	if a.IdempotentHint {
		out.IdempotentHint = &yes
	}
	return out
}
