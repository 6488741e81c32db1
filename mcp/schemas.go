package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/lcptools/lcp/tool"
)

// schemaStore keeps the raw input and output schemas of a server's tools as
// they came on the wire, so that the key order of the server's schemas
// survives into lcp's specs, and their annotations, so that a hint given
// as false stays distinct from one not given.
type schemaStore struct {
	mu  sync.Mutex
	in  map[string]json.RawMessage
	out map[string]json.RawMessage
	ann map[string]json.RawMessage
	// forms are the schemas of the server's recent elicitations as they
	// came, keyed by their canonical form (keys sorted), so that a form
	// is shown with its fields in the server's order.
	forms     map[string]json.RawMessage
	formOrder []string
}

// maxForms bounds the elicitation schemas a store keeps.
const maxForms = 32

func newSchemaStore() *schemaStore {
	return &schemaStore{in: map[string]json.RawMessage{}, out: map[string]json.RawMessage{}, ann: map[string]json.RawMessage{},
		forms: map[string]json.RawMessage{}}
}

// captureRequest records the schema of an elicitation request.
func (s *schemaStore) captureRequest(req *jsonrpc.Request) {
	if req.Method != "elicitation/create" || !bytes.Contains(req.Params, []byte(`"requestedSchema"`)) {
		return
	}
	var p struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if json.Unmarshal(req.Params, &p) != nil || len(p.RequestedSchema) == 0 {
		return
	}
	key, ok := canonicalJSON(p.RequestedSchema)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.forms[key]; !seen {
		s.formOrder = append(s.formOrder, key)
		if len(s.formOrder) > maxForms {
			delete(s.forms, s.formOrder[0])
			s.formOrder = s.formOrder[1:]
		}
	}
	s.forms[key] = compactJSON(p.RequestedSchema)
}

// form returns the schema of an elicitation as the server wrote it, given
// the schema as the SDK decoded it; nil when it was not seen.
func (s *schemaStore) form(decoded any) json.RawMessage {
	raw, err := json.Marshal(decoded)
	if err != nil {
		return nil
	}
	key, ok := canonicalJSON(raw)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forms[key]
}

// canonicalJSON writes a JSON value with the keys of its objects sorted.
func canonicalJSON(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	b, err := json.Marshal(v)
	return string(b), err == nil
}

// captureResult records the schemas of a tools/list result; other results
// are ignored.
func (s *schemaStore) captureResult(result json.RawMessage) {
	if len(result) == 0 || !bytes.Contains(result, []byte(`"inputSchema"`)) {
		return
	}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  json.RawMessage `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &list) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range list.Tools {
		if len(t.InputSchema) > 0 {
			s.in[t.Name] = compactJSON(t.InputSchema)
		}
		if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
			s.out[t.Name] = compactJSON(t.OutputSchema)
		} else {
			delete(s.out, t.Name)
		}
		if len(t.Annotations) > 0 && string(t.Annotations) != "null" {
			s.ann[t.Name] = t.Annotations
		} else {
			delete(s.ann, t.Name)
		}
	}
}

func (s *schemaStore) get(name string) (in, out json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in[name], s.out[name]
}

// annotations returns the tool's annotations as the server wrote them,
// nil when it wrote none or they are not an object lcp reads.
func (s *schemaStore) annotations(name string) *tool.Annotations {
	s.mu.Lock()
	raw := s.ann[name]
	s.mu.Unlock()
	if raw == nil {
		return nil
	}
	var a tool.Annotations
	if json.Unmarshal(raw, &a) != nil {
		return nil
	}
	return &a
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// captureMessage records the schemas of a JSON-RPC message, if it is a
// response to tools/list.
func (s *schemaStore) captureMessage(data []byte) {
	if !bytes.Contains(data, []byte(`"inputSchema"`)) && !bytes.Contains(data, []byte(`"requestedSchema"`)) {
		return
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		s.captureResult(m.Result)
	case *jsonrpc.Request:
		s.captureRequest(m)
	}
}

// headerTransport adds the configured headers to every request of an HTTP
// MCP server and tees responses through the schema store.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	store   *schemaStore
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil || req.Method != http.MethodPost {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseTee{ReadCloser: resp.Body, store: t.store}
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &jsonTee{ReadCloser: resp.Body, store: t.store}
	}
	return resp, nil
}

// maxCapture bounds what a tee keeps of one message.
const maxCapture = 8 << 20

// jsonTee hands the body through and captures it whole at EOF.
type jsonTee struct {
	io.ReadCloser
	store *schemaStore
	buf   bytes.Buffer
	over  bool
}

func (t *jsonTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if !t.over {
		if t.buf.Len()+n > maxCapture {
			t.over = true
			t.buf = bytes.Buffer{}
		} else {
			t.buf.Write(p[:n])
		}
	}
	if err == io.EOF && !t.over {
		t.store.captureMessage(t.buf.Bytes())
		t.over = true
	}
	return n, err
}

// sseTee hands an event stream through and captures the data of every
// event as it completes.
type sseTee struct {
	io.ReadCloser
	store   *schemaStore
	pending []byte // an incomplete line
	data    bytes.Buffer
	over    bool
}

func (t *sseTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.feed(p[:n])
	return n, err
}

func (t *sseTee) feed(b []byte) {
	t.pending = append(t.pending, b...)
	for {
		i := bytes.IndexByte(t.pending, '\n')
		if i < 0 {
			if len(t.pending) > maxCapture {
				t.pending = t.pending[:0]
				t.over = true
			}
			return
		}
		line := bytes.TrimRight(t.pending[:i], "\r")
		t.line(line)
		t.pending = t.pending[i+1:]
	}
}

func (t *sseTee) line(line []byte) {
	if len(line) == 0 { // end of an event
		if t.data.Len() > 0 && !t.over {
			t.store.captureMessage(t.data.Bytes())
		}
		t.data.Reset()
		t.over = false
		return
	}
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		rest = bytes.TrimPrefix(rest, []byte(" "))
		if t.data.Len()+len(rest) > maxCapture {
			t.over = true
			return
		}
		if t.data.Len() > 0 {
			t.data.WriteByte('\n')
		}
		t.data.Write(rest)
	}
}
