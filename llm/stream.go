package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Delta is a piece of a streamed answer, for UIs that show the text as it
// comes.
type Delta struct {
	// Content is the next piece of the answer's text.
	Content string
}

// Stream sends a request with "stream": true and reads the server-sent
// events, calling onDelta (when not nil) for each piece of text, and
// returns the assembled response, tool calls included. Timeout bounds each
// wait for the next piece rather than the whole answer. A server that
// ignores streaming and answers with one JSON object is read as Chat
// reads it (with one delta for its text). The errors are those of Chat.
func (c *Client) Stream(ctx context.Context, req *ChatRequest, onDelta func(Delta)) (*ChatResponse, error) {
	body, err := req.body(c.Model, true)
	if err != nil {
		return nil, err
	}
	x, err := c.start(ctx, http.MethodPost, "/chat/completions", body, "", "text/event-stream", true)
	if err != nil {
		return nil, err
	}
	defer x.close()
	if mt := x.mediaType(); mt == "application/json" {
		raw, err := x.readAll()
		if err != nil {
			return nil, err
		}
		resp, err := decodeResponse(raw)
		if err != nil {
			return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, err)
		}
		if text := resp.Message().Content; text != "" && onDelta != nil {
			onDelta(Delta{Content: text})
		}
		return resp, nil
	}
	resp, err := ReadStream(x.limited, onDelta)
	if err != nil {
		var re *ResponseError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, err)
		}
		return nil, err
	}
	return resp, nil
}

// maxEventLine bounds one line of an event stream, so that a server
// cannot make the reader buffer without end before the size cap applies.
const maxEventLine = 8 << 20

// ReadStream reads a chat-completions event stream (server-sent events
// whose data are chunk objects, ended by "data: [DONE]") and returns the
// response it assembles: the first choice's text and tool calls, its
// finish reason, and the usage when a chunk carries it. onDelta, when not
// nil, gets each piece of text. A stream that ends without [DONE] and
// without a finish reason, carries an error object, or holds a chunk that
// is not JSON gives a *ResponseError; errors of r are returned as they
// are.
func ReadStream(r io.Reader, onDelta func(Delta)) (*ChatResponse, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	a := &assembler{onDelta: onDelta}
	var data []byte
	hasData := false
	for {
		line, err := readEventLine(br)
		if err != nil && err != io.EOF {
			return nil, err
		}
		eof := err == io.EOF
		if len(line) == 0 && !eof {
			// A blank line dispatches the event.
			if hasData {
				if done, derr := a.event(data); derr != nil || done {
					return a.finish(done, derr)
				}
			}
			data, hasData = data[:0], false
			continue
		}
		if v, ok := field(line, "data"); ok {
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, v...)
			hasData = true
		}
		if eof {
			if hasData {
				done, derr := a.event(data)
				return a.finish(done, derr)
			}
			return a.finish(false, nil)
		}
	}
}

// readEventLine returns the next line without its line ending; at the end
// of input it returns the last partial line with io.EOF.
func readEventLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxEventLine {
			return nil, &ResponseError{Reason: fmt.Sprintf("an event stream line is longer than %d bytes", maxEventLine)}
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, err
	}
}

// field returns the value of an event-stream line "name: value" (one
// space after the colon is dropped, as the SSE format says).
func field(line []byte, name string) ([]byte, bool) {
	if !bytes.HasPrefix(line, []byte(name)) {
		return nil, false
	}
	rest := line[len(name):]
	if len(rest) == 0 {
		return rest, true
	}
	if rest[0] != ':' {
		return nil, false
	}
	rest = rest[1:]
	return bytes.TrimPrefix(rest, []byte(" ")), true
}

// streamChunk is one chunk object of a stream.
type streamChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// assembler builds a response from chunks.
type assembler struct {
	onDelta  func(Delta)
	chunks   int
	resp     ChatResponse
	role     string
	content  strings.Builder
	calls    []ToolCall
	args     []*strings.Builder
	byIndex  map[int]int
	finished bool
	reason   string
}

// event handles one event's data; done reports [DONE].
func (a *assembler) event(data []byte) (done bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false, nil
	}
	if string(data) == "[DONE]" {
		return true, nil
	}
	var c streamChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return false, &ResponseError{Reason: "a stream chunk is not a JSON object: " + err.Error()}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		msg, _, _ := errorMessage(data)
		return false, &ResponseError{Reason: "the server reported an error in the stream: " + msg}
	}
	a.chunks++
	if c.ID != "" {
		a.resp.ID = c.ID
	}
	if c.Model != "" {
		a.resp.Model = c.Model
	}
	if c.Usage != nil {
		a.resp.Usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if d.Role != "" {
			a.role = d.Role
		}
		text, err := decodeContent(d.Content)
		if err != nil {
			return false, &ResponseError{Reason: "a stream chunk's content: " + err.Error()}
		}
		if text != "" {
			a.content.WriteString(text)
			if a.onDelta != nil {
				a.onDelta(Delta{Content: text})
			}
		}
		for _, tc := range d.ToolCalls {
			i := a.callSlot(tc.Index, tc.ID)
			call := &a.calls[i]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Type != "" {
				call.Type = tc.Type
			}
			if tc.Function.Name != "" {
				call.Function.Name += tc.Function.Name
			}
			a.args[i].WriteString(argumentsText(tc.Function.Arguments))
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finished = true
			a.reason = *ch.FinishReason
		}
	}
	return false, nil
}

// callSlot returns the position of the call a tool-call delta continues
// or starts. Deltas carry an index; for servers that leave it out, a new
// id starts a new call and anything else continues the last one.
func (a *assembler) callSlot(index *int, id string) int {
	if a.byIndex == nil {
		a.byIndex = map[int]int{}
	}
	if index != nil {
		if i, ok := a.byIndex[*index]; ok {
			return i
		}
		a.byIndex[*index] = len(a.calls)
	} else if n := len(a.calls); n > 0 && (id == "" || a.calls[n-1].ID == id) {
		return n - 1
	}
	a.calls = append(a.calls, ToolCall{})
	a.args = append(a.args, &strings.Builder{})
	return len(a.calls) - 1
}

// argumentsText returns a delta's arguments piece: a JSON string's value,
// or an object's text for servers that send objects.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// finish returns the assembled response once the stream ended.
func (a *assembler) finish(done bool, err error) (*ChatResponse, error) {
	if err != nil {
		return nil, err
	}
	if a.chunks == 0 {
		return nil, &ResponseError{Reason: "the event stream carried no chunk"}
	}
	if !done && !a.finished {
		return nil, &ResponseError{Reason: "the event stream ended before the answer was complete"}
	}
	msg := Message{Role: a.role, Content: a.content.String()}
	for i := range a.calls {
		call := a.calls[i]
		call.Function.Arguments = a.args[i].String()
		msg.ToolCalls = append(msg.ToolCalls, call)
	}
	if err := checkMessage(&msg); err != nil {
		return nil, err
	}
	resp := a.resp
	resp.Choices = []Choice{{Message: msg, FinishReason: a.reason}}
	return &resp, nil
}
