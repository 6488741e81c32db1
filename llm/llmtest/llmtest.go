// Package llmtest is a scripted OpenAI-compatible chat-completions server
// for tests: each request gets the next scripted Reply (an answer, tool
// calls, an HTTP error, a raw body), streamed as server-sent events when the
// request asks for a stream, and every request is recorded so that a test
// can check what the model was sent. It also serves the endpoints of the
// other modalities — images (/images/generations), speech
// (/audio/speech, /audio/voices) and transcription
// (/audio/transcriptions) — with the fixed answers of its fields, and
// records those requests too (MediaRequests).
//
//	srv := llmtest.New(t,
//		llmtest.Calls(llmtest.Call("call_1", "tool_add", `{"a":2,"b":3}`)),
//		llmtest.Text("2 + 3 = 5"),
//	)
//	client := srv.Client()
//	// ... run the agent ...
//	req := srv.Requests()[1] // the second request carries the tool's result
package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp/llm"
)

// Reply is what the server answers to one request.
type Reply struct {
	// Message is the assistant message of a successful answer.
	Message llm.Message
	// FinishReason defaults to "tool_calls" for a message with tool calls,
	// else "stop".
	FinishReason string
	// Usage is reported when set.
	Usage *llm.Usage
	// Status, when set and not 200, is sent with Body instead of an answer.
	Status int
	// Body, when set, is sent as is (with Status, or 200) instead of an
	// answer; ContentType defaults to application/json.
	Body        string
	ContentType string
	// Handler, when set, answers the request instead.
	Handler http.HandlerFunc
}

// Text returns a reply with the assistant's text.
func Text(s string) Reply { return Reply{Message: llm.Assistant(s)} }

// Calls returns a reply that asks for tool calls.
func Calls(calls ...llm.ToolCall) Reply {
	return Reply{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}}
}

// Call returns one tool call with its arguments as JSON text (which may be
// invalid on purpose).
func Call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Type: "function", Function: llm.FunctionCall{Name: name, Arguments: args}}
}

// Error returns a reply with an HTTP error status and body.
func Error(status int, body string) Reply { return Reply{Status: status, Body: body} }

// Raw returns a 200 reply with the given body and content type.
func Raw(contentType, body string) Reply { return Reply{Body: body, ContentType: contentType} }

// Request is a request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	// Body is the raw body; the fields below are decoded from it.
	Body       []byte
	Model      string
	Messages   []llm.Message
	Tools      []json.RawMessage
	ToolChoice string
	Stream     bool
	MaxTokens  int
	// Fields holds every top-level field of the body.
	Fields map[string]json.RawMessage
}

// Server is the scripted server. Its methods are safe for concurrent use;
// set its fields before the requests they answer.
type Server struct {
	*httptest.Server
	// Models is what GET /models lists.
	Models []string
	// Image is the image of POST /images/generations (a 1x1 PNG by
	// default), sent as b64_json, or as a link to GET /files/image when
	// the request asks for "response_format": "url".
	Image []byte
	// Speech is the sound of POST /audio/speech (a short WAV by default),
	// sent with the Content-Type SpeechType (audio/wav by default).
	Speech     []byte
	SpeechType string
	// Transcript is the text of POST /audio/transcriptions.
	Transcript string
	// Voices is what GET /audio/voices lists; nil answers 404, as OpenAI's
	// API does.
	Voices []string
	// MediaHandler, when set, answers the media requests instead (errors,
	// slow answers).
	MediaHandler http.HandlerFunc

	mu       sync.Mutex
	replies  []Reply
	requests []Request
	media    []MediaRequest
	extra    int
}

// MediaRequest is a request to a media endpoint.
type MediaRequest struct {
	Method, Path string
	Header       http.Header
	// Fields are the JSON body's top-level fields, or the form's values
	// (as JSON strings) of a multipart request.
	Fields map[string]json.RawMessage
	// File and FileName are the uploaded file of a multipart request.
	File     []byte
	FileName string
}

// Field returns a field of the request as a string: the JSON string's
// text, else the JSON itself ("" when absent).
func (r MediaRequest) Field(name string) string {
	raw, ok := r.Fields[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Pixel is a 1x1 red PNG, the default image.
var Pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde" +
	"\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")

// Beep is a short WAV (8 kHz, 16-bit, mono, a few samples), the default
// speech.
var Beep = wav(8)

func wav(samples int) []byte {
	data := make([]byte, 2*samples)
	var b bytes.Buffer
	le32 := func(v int) { b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}) }
	le16 := func(v int) { b.Write([]byte{byte(v), byte(v >> 8)}) }
	b.WriteString("RIFF")
	le32(36 + len(data))
	b.WriteString("WAVEfmt ")
	le32(16)
	le16(1)
	le16(1)
	le32(8000)
	le32(16000)
	le16(2)
	le16(16)
	b.WriteString("data")
	le32(len(data))
	b.Write(data)
	return b.Bytes()
}

// MediaRequests returns the media requests received so far.
func (s *Server) MediaRequests() []MediaRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MediaRequest(nil), s.media...)
}

// New starts a server with the scripted replies; it is closed when the
// test ends, and the test fails if a request came after the script ran
// out.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := NewServer(replies...)
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.extra > 0 {
			t.Errorf("llmtest: %d request(s) came after the scripted replies ran out", s.extra)
		}
	})
	return s
}

// NewServer starts a server with the scripted replies, for code without a
// testing.TB (examples); the caller closes it.
func NewServer(replies ...Reply) *Server {
	s := &Server{replies: replies, Models: []string{"test-model"}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the chat requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Left returns the number of scripted replies not used yet.
func (s *Server) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

// BaseURL returns the API base of the server (its URL + "/v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Client returns a client of the server with model "test-model".
func (s *Server) Client() *llm.Client {
	return &llm.Client{BaseURL: s.BaseURL(), Model: "test-model", HTTPClient: s.Server.Client()}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.serveModels(w)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.serveChat(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/files/image":
		w.Header().Set("Content-Type", http.DetectContentType(s.image()))
		_, _ = w.Write(s.image())
	case strings.HasSuffix(r.URL.Path, "/images/generations"), strings.HasSuffix(r.URL.Path, "/audio/speech"),
		strings.HasSuffix(r.URL.Path, "/audio/transcriptions"), strings.HasSuffix(r.URL.Path, "/audio/voices"):
		s.serveMedia(w, r)
	default:
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
	}
}

func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID     string `json:"id"`
		Object string `json:"object"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	s.mu.Lock()
	for _, m := range s.Models {
		list.Data = append(list.Data, model{ID: m, Object: "model"})
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var wire struct {
		Model      string            `json:"model"`
		Messages   []llm.Message     `json:"messages"`
		Tools      []json.RawMessage `json:"tools"`
		ToolChoice string            `json:"tool_choice"`
		Stream     bool              `json:"stream"`
		MaxTokens  int               `json:"max_tokens"`
	}
	decodeErr := json.Unmarshal(body, &wire)
	_ = json.Unmarshal(body, &req.Fields)
	req.Model, req.Messages, req.Tools, req.ToolChoice = wire.Model, wire.Messages, wire.Tools, wire.ToolChoice
	req.Stream, req.MaxTokens = wire.Stream, wire.MaxTokens

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var reply Reply
	ok := len(s.replies) > 0
	if ok {
		reply, s.replies = s.replies[0], s.replies[1:]
	} else {
		s.extra++
	}
	s.mu.Unlock()

	switch {
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, "llmtest: the request body is not a chat request: "+decodeErr.Error())
	case !ok:
		writeError(w, http.StatusInternalServerError, "llmtest: no scripted reply left")
	case reply.Handler != nil:
		reply.Handler(w, r)
	case reply.Body != "" || (reply.Status != 0 && reply.Status != http.StatusOK):
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		if reply.Status != 0 {
			w.WriteHeader(reply.Status)
		}
		_, _ = io.WriteString(w, reply.Body)
	case wire.Stream:
		writeStream(w, reply)
	default:
		writeAnswer(w, reply)
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest"}})
	_, _ = w.Write(b)
}

func finishReason(r Reply) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.Message.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func writeAnswer(w http.ResponseWriter, r Reply) {
	msg := r.Message
	if msg.Role == "" {
		msg.Role = llm.RoleAssistant
	}
	resp := llm.ChatResponse{
		ID: "chatcmpl-test", Model: "test-model",
		Choices: []llm.Choice{{Message: msg, FinishReason: finishReason(r)}},
		Usage:   r.Usage,
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// writeStream sends the reply as chat-completions chunks: the role, the
// text in pieces, each tool call's name and then its arguments in two
// pieces, the finish reason, the usage, [DONE].
func writeStream(w http.ResponseWriter, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish *string, usage *llm.Usage) {
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": finish}
		chunk := map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test-model", "choices": []any{choice}}
		if usage != nil {
			chunk["usage"] = usage
			chunk["choices"] = []any{}
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range split(r.Message.Content, 3) {
		send(map[string]any{"content": piece}, nil, nil)
	}
	for i, tc := range r.Message.ToolCalls {
		send(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Function.Name, "arguments": ""},
		}}}, nil, nil)
		for _, piece := range split(tc.Function.Arguments, 2) {
			send(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil, nil)
		}
	}
	fr := finishReason(r)
	send(map[string]any{}, &fr, nil)
	if r.Usage != nil {
		send(nil, nil, r.Usage)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// split cuts s into at most n pieces on byte boundaries that keep UTF-8
// intact.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8Start(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// LastUserText returns the content of the last user message of req.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ToolMessage returns the tool message that answers the call id, and
// whether there is one.
func (r Request) ToolMessage(id string) (llm.Message, bool) {
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return m, true
		}
	}
	return llm.Message{}, false
}

// ToolNames returns the function names of the request's tool specs.
func (r Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		var spec struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(t, &spec) == nil {
			names = append(names, spec.Function.Name)
		}
	}
	return names
}

// Huge returns a 200 reply whose body is n bytes of a JSON string: for
// tests of the size caps.
func Huge(n int) Reply {
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(`{"choices":[{"message":{"role":"assistant","content":"`)
	for b.Len() < n-10 {
		b.WriteString("xxxxxxxxxxxxxxxx")
	}
	b.WriteString(`"}}]}`)
	return Reply{Body: b.String()}
}

func (s *Server) image() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Image != nil {
		return s.Image
	}
	return Pixel
}

// serveMedia records a media request and answers it.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request) {
	req := MediaRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Fields: map[string]json.RawMessage{}}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(32 << 20); err == nil {
			for k, vs := range r.MultipartForm.Value {
				req.Fields[k], _ = json.Marshal(vs[0])
			}
			if fh := r.MultipartForm.File["file"]; len(fh) > 0 {
				req.FileName = fh[0].Filename
				if f, err := fh[0].Open(); err == nil {
					req.File, _ = io.ReadAll(f)
					f.Close()
				}
			}
		}
	} else if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req.Fields)
	}
	s.mu.Lock()
	s.media = append(s.media, req)
	h, speech, speechType, transcript, voices := s.MediaHandler, s.Speech, s.SpeechType, s.Transcript, s.Voices
	s.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	writeJSON := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/images/generations"):
		if req.Field("response_format") == "url" {
			writeJSON(map[string]any{"created": 1, "data": []any{map[string]any{"url": s.URL + "/files/image"}}})
			return
		}
		writeJSON(map[string]any{"created": 1, "data": []any{map[string]any{
			"b64_json": base64.StdEncoding.EncodeToString(s.image()), "revised_prompt": "llmtest: " + req.Field("prompt")}}})
	case strings.HasSuffix(r.URL.Path, "/audio/speech"):
		if speech == nil {
			speech = Beep
		}
		if speechType == "" {
			speechType = "audio/wav"
		}
		w.Header().Set("Content-Type", speechType)
		_, _ = w.Write(speech)
	case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
		writeJSON(map[string]any{"text": transcript})
	case voices == nil:
		writeError(w, http.StatusNotFound, "llmtest: no voice list")
	default:
		writeJSON(map[string]any{"voices": voices})
	}
}
