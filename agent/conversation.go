package agent

import (
	"encoding/json"
	"sync"

	"github.com/lcptools/lcp/llm"
)

// Conversation is the dialogue an agent keeps with the model: user,
// assistant and tool messages, in order. Run appends to it; the host adds
// the user's messages. The system prompt is not part of it: Run composes
// it for each request (Options.System and the libraries' prompts), unless
// the conversation starts with a system message of its own.
//
// A Conversation is safe for concurrent use, so that a tool running inside
// a turn can read it (tool.CallRequest.Conversation; a Python tool's
// discussion_instance) while the host shows it. It is a tool.Conversation.
type Conversation struct {
	mu   sync.RWMutex
	msgs []llm.Message
}

// NewConversation returns a conversation that starts with msgs.
func NewConversation(msgs ...llm.Message) *Conversation {
	return &Conversation{msgs: append([]llm.Message(nil), msgs...)}
}

// Append adds messages at the end.
func (c *Conversation) Append(msgs ...llm.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, msgs...)
}

// Messages returns a copy of the messages.
func (c *Conversation) Messages() []llm.Message {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]llm.Message(nil), c.msgs...)
}

// Len returns the number of messages.
func (c *Conversation) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.msgs)
}

// Truncate keeps the first n messages, for a host that abandons a turn.
func (c *Conversation) Truncate(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n >= 0 && n < len(c.msgs) {
		clear(c.msgs[n:])
		c.msgs = c.msgs[:n]
	}
}

// JSON returns the messages as a JSON array in the chat-completions layout
// ([{"role": "user", "content": "..."}, ...]): what a Python tool's
// discussion_instance reads.
func (c *Conversation) JSON() json.RawMessage {
	msgs := c.Messages()
	if msgs == nil {
		msgs = []llm.Message{}
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		// Messages hold only strings; this cannot happen.
		return json.RawMessage(`[]`)
	}
	return b
}

// MarshalJSON writes the messages as JSON returns them.
func (c *Conversation) MarshalJSON() ([]byte, error) { return c.JSON(), nil }

// UnmarshalJSON replaces the messages with a JSON array of messages, to
// resume a saved conversation.
func (c *Conversation) UnmarshalJSON(data []byte) error {
	var msgs []llm.Message
	if err := json.Unmarshal(data, &msgs); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = msgs
	return nil
}
