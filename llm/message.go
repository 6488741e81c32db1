package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation, in the chat-completions
// layout: a system prompt, a user's text, an assistant's answer or tool
// calls, or a tool's result (Role "tool", with the ToolCallID it answers).
type Message struct {
	Role    string
	Content string
	// Name is the optional name of the message's author.
	Name string
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
}

// System returns a system message.
func System(text string) Message { return Message{Role: RoleSystem, Content: text} }

// User returns a user message.
func User(text string) Message { return Message{Role: RoleUser, Content: text} }

// Assistant returns an assistant message with text.
func Assistant(text string) Message { return Message{Role: RoleAssistant, Content: text} }

// ToolResult returns the tool message that answers the call id.
func ToolResult(id, text string) Message {
	return Message{Role: RoleTool, ToolCallID: id, Content: text}
}

// wireMessage is the JSON layout of a message. Content is a pointer so that
// an assistant message made only of tool calls carries "content": null, as
// the OpenAI API documents it.
type wireMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// MarshalJSON writes the message in the chat-completions layout.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		c := m.Content
		w.Content = &c
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a message as servers send it: content as a string,
// null, or a list of parts whose text parts are joined.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	content, err := decodeContent(w.Content)
	if err != nil {
		return err
	}
	if len(w.ToolCalls) == 0 {
		w.ToolCalls = nil
	}
	*m = Message{Role: w.Role, Content: content, Name: w.Name, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	return nil
}

// decodeContent reads a content value: a string, null, or a list of parts
// ({"type": "text", "text": ...}; other parts carry no text and are
// skipped).
func decodeContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", errors.New("content is neither a string, null nor a list of parts")
}

// ToolCall is one call an assistant message asks for.
type ToolCall struct {
	// ID identifies the call; the tool message that answers it carries it
	// back.
	ID string `json:"id"`
	// Type is "function".
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and carries its arguments.
type FunctionCall struct {
	Name string `json:"name"`
	// Arguments is the arguments object as JSON text, exactly as the model
	// wrote it: it may be invalid JSON, which the caller must handle.
	Arguments string `json:"arguments"`
}

// UnmarshalJSON reads a function call whose arguments are a JSON string
// (the standard) or, as some servers send them, a JSON object.
func (f *FunctionCall) UnmarshalJSON(data []byte) error {
	var w struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	f.Name = w.Name
	args := bytes.TrimSpace(w.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
		f.Arguments = ""
	case args[0] == '"':
		if err := json.Unmarshal(args, &f.Arguments); err != nil {
			return err
		}
	default:
		f.Arguments = string(args)
	}
	return nil
}
