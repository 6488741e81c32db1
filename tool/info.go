package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
)

// Info describes one tool: what the LLM sees (name, description, input
// schema) and what the host needs to know about it.
type Info struct {
	// Name is the unique name the LLM calls the tool by.
	Name string
	// Title is a name for people (MCP's title), possibly empty.
	Title string
	// Description is the text the LLM reads to decide when to call the tool.
	Description string
	// InputSchema is the JSON schema of the arguments object. Its bytes are
	// kept as given so that key order survives into specs.
	InputSchema json.RawMessage
	// OutputSchema, when set, is the JSON schema of the structured result.
	OutputSchema json.RawMessage
	// Interactions declares what the tool may ask its caller while it runs.
	Interactions Capabilities
	// DetectedInteractions, when set, is what a reading of the tool's
	// source shows it may ask, narrower than Interactions: a Python tool
	// declares every kind, since any of them may call the handlers the
	// host gives it, while most ask nothing. Hosts show it to people (the
	// web page's "may ask"); calls are checked against Interactions only.
	DetectedInteractions *Capabilities
	// Annotations are hints about how the tool behaves (read-only,
	// destructive...), as MCP clients show them; nil when none are
	// declared.
	Annotations *Annotations
	// Library is the library the tool belongs to.
	Library Library
	// Source is the file the tool was read from, if any.
	Source string
	// ParsedViaRegexFallback is set for tools of a Python file that is not
	// valid Python, read by the lossy line-based extractor.
	ParsedViaRegexFallback bool
}

// Annotations are MCP's hints about a tool's behaviour. They are hints
// from the tool's author, for clients deciding what to show or confirm:
// never a guarantee, never a reason to skip lcp's own approvals. A nil
// hint is unset: MCP's defaults then apply (not read-only, destructive,
// not idempotent, open world).
type Annotations struct {
	// Title is a name for people.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the tool does not change its environment.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: the tool may destroy or overwrite (meaningful when
	// not read-only).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: calling it again with the same arguments changes
	// nothing more (meaningful when not read-only).
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool reaches beyond a closed domain (the web,
	// other people's systems).
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// Library describes a tool library for host UIs.
type Library struct {
	// ID is the library's key: the file stem for LCP libraries (the key of
	// host_tool_configs), the alias for MCP servers.
	ID string
	// Name is the human name (TOOL_LIBRARY_NAME); it defaults to ID.
	Name string
	// Description is TOOL_LIBRARY_DESC, possibly empty.
	Description string
	// Icon is TOOL_LIBRARY_ICON, possibly empty.
	Icon string
}

// SystemPrompt is a library's contribution to the system prompt of an
// LLM host (for LCP libraries, what tool_<stem>_prompt() returned).
type SystemPrompt struct {
	Library string `json:"library"`
	File    string `json:"file,omitempty"`
	Text    string `json:"text"`
}

// Capabilities lists the kinds of Request a tool may make. Asking for a
// kind that was not declared is an *UndeclaredInteractionError.
type Capabilities struct {
	Confirm        bool `json:"confirm,omitempty"`
	Text           bool `json:"text,omitempty"`
	MultilineText  bool `json:"multiline_text,omitempty"`
	Secret         bool `json:"secret,omitempty"`
	Select         bool `json:"select,omitempty"`
	Form           bool `json:"form,omitempty"`
	FormValidation bool `json:"form_validation,omitempty"`
}

// AllInteractions declares every kind of request. Python tools get it: any
// of them may call the handlers the host gives them.
var AllInteractions = Capabilities{Confirm: true, Text: true, MultilineText: true, Secret: true, Select: true, Form: true, FormValidation: true}

// allows reports whether the capabilities cover r.
func (c Capabilities) allows(r *Request) bool {
	switch r.Kind {
	case KindConfirm:
		return c.Confirm
	case KindText:
		return c.Text && (!r.Multiline || c.MultilineText)
	case KindSecret:
		return c.Secret
	case KindSelect:
		return c.Select
	case KindForm:
		return c.Form && (!r.Validate || c.FormValidation)
	case KindHost:
		return true // the host's own request, not the person's
	}
	return false
}

// Format names a spec layout understood by LLM APIs.
type Format string

// The spec formats of SPEC §6.
const (
	// FormatLCP is {"name","description","input_schema"}.
	FormatLCP Format = "lcp"
	// FormatOpenAI is {"type":"function","function":{"name","description","parameters"}}.
	FormatOpenAI Format = "openai"
	// FormatAnthropic is {"name","description","input_schema"}.
	FormatAnthropic Format = "anthropic"
	// FormatMCP is {"name","description","inputSchema"}.
	FormatMCP Format = "mcp"
)

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatLCP, FormatOpenAI, FormatAnthropic, FormatMCP:
		return f, nil
	}
	return "", fmt.Errorf("unknown spec format %q (want lcp, openai, anthropic or mcp)", s)
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{},"required":[]}`)

// Spec returns the tool's spec in format f, with keys in the documented
// order. The LCP format carries "_parsed_via_regex_fallback": true for
// tools read by the fallback extractor.
func (i *Info) Spec(f Format) json.RawMessage {
	// The keys, quotes and escapes of most specs fit in 64 bytes more.
	return i.AppendSpec(make([]byte, 0, len(i.InputSchema)+len(i.Name)+len(i.Description)+64), f)
}

// AppendSpec appends the tool's spec in format f (see Spec) to dst and
// returns the extended buffer: a host that writes thousands of specs one
// after the other can use one buffer for all.
func (i *Info) AppendSpec(dst []byte, f Format) []byte {
	schema := i.InputSchema
	if len(schema) == 0 {
		schema = emptyObjectSchema
	}
	b := dst
	switch f {
	case FormatOpenAI:
		b = append(b, `{"type":"function","function":{"name":`...)
		b = appendJSONString(b, i.Name)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, i.Description)
		b = append(b, `,"parameters":`...)
		b = append(b, schema...)
		b = append(b, `}}`...)
	case FormatMCP:
		b = append(b, `{"name":`...)
		b = appendJSONString(b, i.Name)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, i.Description)
		b = append(b, `,"inputSchema":`...)
		b = append(b, schema...)
		b = append(b, '}')
	default: // lcp and anthropic share a layout
		b = append(b, `{"name":`...)
		b = appendJSONString(b, i.Name)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, i.Description)
		b = append(b, `,"input_schema":`...)
		b = append(b, schema...)
		if f == FormatLCP && i.ParsedViaRegexFallback {
			b = append(b, `,"_parsed_via_regex_fallback":true`...)
		}
		b = append(b, '}')
	}
	return b
}

// writeJSONString writes s as a JSON string without HTML escaping, so that
// specs read like the Python reference prints them.
func writeJSONString(b *bytes.Buffer, s string) {
	b.Write(appendJSONString(b.AvailableBuffer(), s))
}

// appendJSONString appends s as a JSON string without HTML escaping.
func appendJSONString(dst []byte, s string) []byte {
	if plainASCII(s) {
		// Most names and descriptions: nothing to escape, and no encoder
		// to make for each (listing thousands of tools makes thousands).
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, b.Bytes()[:b.Len()-1]...)
}

// plainASCII reports whether s is printable ASCII without '"' or '\\':
// its JSON string is itself in quotes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// MaxNameLength bounds the length of a tool name, in characters.
const MaxNameLength = 128

// CheckName reports whether name is a valid tool name in an inventory: 1
// to MaxNameLength characters, each a letter or a digit (of any script,
// as Python identifiers allow), '_', '-', '.' or ':' (MCP tools are named
// "<alias>::<tool>"). LLM APIs and MCP clients accept fewer characters:
// WireNames maps inventory names to names they accept.
func CheckName(name string) error {
	if name == "" {
		return errors.New("a tool needs a name")
	}
	n := 0
	for _, r := range name {
		n++
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.' || r == ':') {
			return fmt.Errorf("invalid tool name %q: %q is not allowed (letters, digits, '_', '-', '.' and ':' are)", name, r)
		}
	}
	if n > MaxNameLength {
		return fmt.Errorf("invalid tool name %q: longer than %d characters", name, MaxNameLength)
	}
	return nil
}
