package llm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ChatRequest is one chat-completions request.
type ChatRequest struct {
	// Model names the model; empty means the Client's Model.
	Model    string
	Messages []Message
	// Tools are the tools' specs in the OpenAI layout
	// ({"type":"function","function":{...}}), as tool.Info.Spec gives them.
	Tools []json.RawMessage
	// ToolChoice is "auto" (the default when there are tools), "none" or
	// "required".
	ToolChoice string
	// MaxTokens bounds the answer's length; zero means the server's default.
	MaxTokens int
	// Temperature, TopP and Seed are sent when set.
	Temperature *float64
	TopP        *float64
	Seed        *int64
	// Stop ends the answer at any of these strings.
	Stop []string
	// Extra holds further top-level fields the server understands
	// (llama.cpp's "top_k", "repeat_penalty"...). They never replace the
	// fields above.
	Extra map[string]json.RawMessage
}

// wireRequest is the JSON body of a request.
type wireRequest struct {
	Model       string            `json:"model,omitempty"`
	Messages    []Message         `json:"messages"`
	Tools       []json.RawMessage `json:"tools,omitempty"`
	ToolChoice  string            `json:"tool_choice,omitempty"`
	MaxTokens   int               `json:"max_tokens,omitempty"`
	Temperature *float64          `json:"temperature,omitempty"`
	TopP        *float64          `json:"top_p,omitempty"`
	Seed        *int64            `json:"seed,omitempty"`
	Stop        []string          `json:"stop,omitempty"`
	Stream      bool              `json:"stream,omitempty"`
}

// body returns the request's JSON body for the given model.
func (r *ChatRequest) body(model string, stream bool) ([]byte, error) {
	if r.Model != "" {
		model = r.Model
	}
	w := wireRequest{
		Model: model, Messages: r.Messages, Tools: r.Tools, ToolChoice: r.ToolChoice,
		MaxTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP, Seed: r.Seed,
		Stop: r.Stop, Stream: stream,
	}
	if w.Messages == nil {
		w.Messages = []Message{}
	}
	for i, t := range w.Tools {
		if !json.Valid(t) {
			return nil, fmt.Errorf("llm: tool spec %d is not valid JSON", i)
		}
	}
	if len(w.Tools) > 0 && w.ToolChoice == "" {
		w.ToolChoice = "auto"
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("llm: encoding the request: %w", err)
	}
	if len(r.Extra) == 0 {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("llm: encoding the request: %w", err)
	}
	for k, v := range r.Extra {
		if _, set := m[k]; set {
			continue
		}
		if !json.Valid(v) {
			return nil, fmt.Errorf("llm: extra field %q is not valid JSON", k)
		}
		m[k] = v
	}
	return json.Marshal(m)
}

// ChatResponse is a chat-completions response.
type ChatResponse struct {
	ID      string   `json:"id"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	// Usage is the token count, when the server reports it.
	Usage *Usage `json:"usage,omitempty"`
}

// Message returns the first choice's message: the assistant's answer.
func (r *ChatResponse) Message() Message {
	if r == nil || len(r.Choices) == 0 {
		return Message{Role: RoleAssistant}
	}
	return r.Choices[0].Message
}

// FinishReason returns the first choice's finish reason ("stop",
// "tool_calls", "length"...).
func (r *ChatResponse) FinishReason() string {
	if r == nil || len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].FinishReason
}

// Choice is one alternative answer; lcp asks for one.
type Choice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

// Usage counts the tokens of one request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add adds o to u.
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
}

// decodeResponse reads a non-streamed response body.
func decodeResponse(body []byte) (*ChatResponse, error) {
	var resp struct {
		ChatResponse
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &ResponseError{Reason: "the body is not a chat-completions JSON object: " + err.Error()}
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		msg, _, _ := errorMessage(body)
		return nil, &ResponseError{Reason: "the server answered with an error: " + msg}
	}
	if len(resp.Choices) == 0 {
		return nil, &ResponseError{Reason: "the response has no choices"}
	}
	r := resp.ChatResponse
	if err := checkMessage(&r.Choices[0].Message); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkMessage validates the assistant message of a response and fills
// what servers may leave out.
func checkMessage(m *Message) error {
	if m.Role == "" {
		m.Role = RoleAssistant
	}
	if m.Role != RoleAssistant {
		return &ResponseError{Reason: fmt.Sprintf("the response's message has role %q, not assistant", m.Role)}
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		if tc.Type == "" {
			tc.Type = "function"
		}
		if tc.ID == "" {
			// Some servers leave ids out; the tool message needs one,
			// unique in the conversation.
			tc.ID = newCallID()
		}
	}
	return nil
}

// newCallID returns a random tool call id.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
