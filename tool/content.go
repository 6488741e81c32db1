package tool

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The types of content block a result may carry, as MCP names them.
const (
	// ContentText is text (Content.Text).
	ContentText = "text"
	// ContentImage is an image: Data in the format MIMEType says.
	ContentImage = "image"
	// ContentAudio is a sound: Data in the format MIMEType says.
	ContentAudio = "audio"
	// ContentResource is an embedded resource: a document with its URI,
	// as text (Text) or bytes (Data).
	ContentResource = "resource"
	// ContentResourceLink points to a resource by URI without embedding
	// it (Name, Title, Description, MIMEType and Size describe it).
	ContentResourceLink = "resource_link"
)

// ContentKey is the key of the LCP result object that carries content
// blocks: what a Python tool returns to give images, audio, resources or
// several blocks ({"output": ..., "_lcp_content": [...]}), and what lcp
// writes in the JSON of a Result that has Content. The name sits in lcp's
// own "_" namespace beside "_converted", so that no key of the LCP
// contract (output, content, result...) changes meaning.
const ContentKey = "_lcp_content"

// Content is one block of a rich result: text, an image, a sound, an
// embedded resource or a link to one — MCP's content blocks. Its JSON is
// MCP's block: {"type": "image", "data": "<base64>", "mimeType":
// "image/png"}, {"type": "resource", "resource": {"uri", "mimeType",
// "text" | "blob"}}, {"type": "resource_link", "uri", "name", ...}, each
// with optional "annotations" and "_meta".
type Content struct {
	// Type is one of ContentText, ContentImage, ContentAudio,
	// ContentResource and ContentResourceLink.
	Type string
	// Text is the text of a text block or of an embedded text resource.
	Text string
	// Data is the bytes of an image, a sound or an embedded binary
	// resource (non-nil, possibly empty, for the latter).
	Data []byte
	// MIMEType is the format of Data or of the resource.
	MIMEType string
	// URI names the resource of a resource or resource_link block.
	URI string
	// Name, Title, Description and Size describe a linked resource.
	Name        string
	Title       string
	Description string
	Size        *int64
	// Annotations are hints for clients (audience, priority).
	Annotations *ContentAnnotations
	// Meta is the block's "_meta" object, carried as it is.
	Meta map[string]any
}

// ContentAnnotations are MCP's hints about a content block.
type ContentAnnotations struct {
	// Audience lists who the block is for: "user", "assistant".
	Audience []string `json:"audience,omitempty"`
	// Priority is the block's importance, from 0 to 1.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 time.
	LastModified string `json:"lastModified,omitempty"`
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// ImageContent returns an image block of data in format mimeType
// ("image/png").
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MIMEType: mimeType}
}

// AudioContent returns a sound block of data in format mimeType
// ("audio/wav").
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: data, MIMEType: mimeType}
}

// ResourceContent returns an embedded text resource.
func ResourceContent(uri, mimeType, text string) Content {
	return Content{Type: ContentResource, URI: uri, MIMEType: mimeType, Text: text}
}

// BlobContent returns an embedded binary resource.
func BlobContent(uri, mimeType string, data []byte) Content {
	if data == nil {
		data = []byte{}
	}
	return Content{Type: ContentResource, URI: uri, MIMEType: mimeType, Data: data}
}

// ResourceLink returns a link to the resource at uri, named name.
func ResourceLink(uri, name string) Content {
	return Content{Type: ContentResourceLink, URI: uri, Name: name}
}

// IsBlob reports whether an embedded resource holds bytes rather than
// text.
func (c *Content) IsBlob() bool { return c.Type == ContentResource && c.Data != nil }

// Check reports whether c is a block lcp can carry: a known type with
// what that type needs (data and a MIME type for images and sounds, a URI
// for resources and links).
func (c *Content) Check() error {
	switch c.Type {
	case ContentText:
	case ContentImage, ContentAudio:
		if c.Data == nil {
			return fmt.Errorf("an %s block needs data", c.Type)
		}
		if c.MIMEType == "" {
			return fmt.Errorf("an %s block needs a mimeType", c.Type)
		}
	case ContentResource, ContentResourceLink:
		if c.URI == "" {
			return fmt.Errorf("a %s block needs a uri", c.Type)
		}
	case "":
		return errors.New(`a content block needs a "type"`)
	default:
		return fmt.Errorf("unknown content type %q (lcp carries text, image, audio, resource and resource_link)", c.Type)
	}
	return nil
}

// CheckContent checks every block (Content.Check); the error names the
// first bad one by its index.
func CheckContent(blocks []Content) error {
	for i := range blocks {
		if err := blocks[i].Check(); err != nil {
			return fmt.Errorf("content block %d: %w", i, err)
		}
	}
	return nil
}

// Placeholder describes a block for people and LLMs that cannot take it
// whole: its type, MIME type and size ("[image image/png, 68 bytes]"),
// the URI of a resource or link. A text block's placeholder is its text.
func (c *Content) Placeholder() string {
	switch c.Type {
	case ContentText:
		return c.Text
	case ContentResourceLink:
		s := "[resource link " + c.URI
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += fmt.Sprintf(", %d bytes", *c.Size)
		}
		return s + "]"
	case ContentResource:
		n := len(c.Text)
		if c.IsBlob() {
			n = len(c.Data)
		}
		s := "[resource " + c.URI
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		return s + fmt.Sprintf(", %d bytes]", n)
	}
	return fmt.Sprintf("[%s %s, %d bytes]", c.Type, c.MIMEType, len(c.Data))
}

// TextOf is what an LLM reads of content blocks: the text blocks and
// embedded text resources, one per line; when there are none, the
// placeholder of every block.
func TextOf(blocks []Content) string {
	var texts []string
	for i := range blocks {
		switch c := &blocks[i]; {
		case c.Type == ContentText:
			texts = append(texts, c.Text)
		case c.Type == ContentResource && !c.IsBlob():
			texts = append(texts, c.Text)
		}
	}
	if len(texts) == 0 {
		for i := range blocks {
			texts = append(texts, blocks[i].Placeholder())
		}
	}
	return strings.Join(texts, "\n")
}

// ContentResult returns a successful result made of content blocks: what
// an LLM reads (Output) is TextOf them. It is what a native tool
// returns to give images, audio or several blocks; NormalizeValue makes
// it of a Content or a []Content the tool returns.
func ContentResult(blocks ...Content) *Result {
	out, _ := json.Marshal(TextOf(blocks))
	return &Result{Success: true, StatusCode: 200, Output: out, Content: blocks}
}

// contentWire is a block as MCP writes it.
type contentWire struct {
	Type        string              `json:"type"`
	Text        *string             `json:"text,omitempty"`
	Data        *string             `json:"data,omitempty"`
	MIMEType    string              `json:"mimeType,omitempty"`
	Resource    *resourceWire       `json:"resource,omitempty"`
	URI         string              `json:"uri,omitempty"`
	Name        string              `json:"name,omitempty"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	Size        *int64              `json:"size,omitempty"`
	Annotations *ContentAnnotations `json:"annotations,omitempty"`
	Meta        map[string]any      `json:"_meta,omitempty"`
}

type resourceWire struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// MarshalJSON writes the block as MCP does.
func (c Content) MarshalJSON() ([]byte, error) {
	w := contentWire{Type: c.Type, Annotations: c.Annotations, Meta: c.Meta}
	switch c.Type {
	case ContentText:
		w.Text = &c.Text
	case ContentImage, ContentAudio:
		d := base64.StdEncoding.EncodeToString(c.Data)
		w.Data, w.MIMEType = &d, c.MIMEType
	case ContentResource:
		r := &resourceWire{URI: c.URI, MIMEType: c.MIMEType}
		if c.IsBlob() {
			b := base64.StdEncoding.EncodeToString(c.Data)
			r.Blob = &b
		} else {
			r.Text = &c.Text
		}
		w.Resource = r
	case ContentResourceLink:
		w.URI, w.Name, w.Title, w.Description, w.MIMEType, w.Size = c.URI, c.Name, c.Title, c.Description, c.MIMEType, c.Size
	default:
		if err := c.Check(); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// UnmarshalJSON reads a block as MCP writes it. A block lcp cannot carry
// (an unknown type, an image without data, data that is not base64) is
// an error that says what is wrong, never dropped.
func (c *Content) UnmarshalJSON(data []byte) error {
	var w contentWire
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("a content block must be an object with a \"type\": %w", err)
	}
	*c = Content{Type: w.Type, Annotations: w.Annotations, Meta: w.Meta}
	switch w.Type {
	case ContentText:
		if w.Text == nil {
			return errors.New(`a text block needs "text"`)
		}
		c.Text = *w.Text
	case ContentImage, ContentAudio:
		if w.Data == nil {
			return fmt.Errorf(`an %s block needs "data" (base64)`, w.Type)
		}
		b, err := decodeBase64(*w.Data)
		if err != nil {
			return fmt.Errorf("the data of an %s block is not base64: %w", w.Type, err)
		}
		c.Data, c.MIMEType = b, w.MIMEType
	case ContentResource:
		r := w.Resource
		if r == nil {
			return errors.New(`a resource block needs "resource": {"uri", "mimeType", "text" or "blob"}`)
		}
		c.URI, c.MIMEType = r.URI, r.MIMEType
		switch {
		case r.Blob != nil:
			b, err := decodeBase64(*r.Blob)
			if err != nil {
				return fmt.Errorf("the blob of a resource block is not base64: %w", err)
			}
			if b == nil {
				b = []byte{}
			}
			c.Data = b
		case r.Text != nil:
			c.Text = *r.Text
		default:
			return errors.New(`the resource of a resource block needs "text" or "blob"`)
		}
	case ContentResourceLink:
		c.URI, c.Name, c.Title, c.Description, c.MIMEType, c.Size = w.URI, w.Name, w.Title, w.Description, w.MIMEType, w.Size
		if c.Name == "" {
			c.Name = c.URI // MCP requires a name; the URI is the honest one
		}
	}
	return c.Check()
}

// decodeBase64 reads standard base64, with or without padding (Python's
// b64encode pads, some encoders do not).
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	return base64.RawStdEncoding.DecodeString(s)
}

// ParseContent reads a JSON array of content blocks (the value of
// ContentKey). The error names the first bad block by its index.
func ParseContent(raw json.RawMessage) ([]Content, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("content must be a JSON array of blocks")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	out := make([]Content, len(items))
	for i, it := range items {
		if err := out[i].UnmarshalJSON(it); err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
	}
	return out, nil
}
