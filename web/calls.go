package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lcptools/lcp/tool"
)

// Call is a call made from the page, as the API shows it.
type Call struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Args are the arguments as sent.
	Args json.RawMessage `json:"args,omitempty"`
	// State is "running" or "done".
	State    string    `json:"state"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Result is the LCP result object (SPEC §7) of a finished call; an
	// engine error is in it too (404, 400, 499, 504, 500), and then
	// EngineError is set.
	Result      json.RawMessage `json:"result,omitempty"`
	EngineError bool            `json:"engine_error,omitempty"`
	// Printed is what the tool printed and logged, in order, kept with the
	// call so that a page loaded later shows it too: at most
	// maxPrintedBytes, PrintedDropped counts what was left out.
	Printed        []Printed `json:"printed,omitempty"`
	PrintedDropped int64     `json:"printed_dropped,omitempty"`
	// Progress is the latest progress the tool reported, if any.
	Progress *Progress `json:"progress,omitempty"`
	// Rejected is set when a confirmation of the call was declined (by
	// the operator, a policy or a time limit): the card says "rejected",
	// not merely "failed".
	Rejected *Rejection `json:"rejected,omitempty"`
}

// Printed is one piece of what a tool printed ("stdout", "stderr") or
// logged ("log": "level: message").
type Printed struct {
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// Progress is how far a call has got: Total is 0 when unknown.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// Rejection is a declined confirmation of a call: what the tool wanted to
// do (Label) and the reason it was given.
type Rejection struct {
	Label  string `json:"label,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// call is the server's record of a call.
type call struct {
	Call
	cancel context.CancelFunc
	// printedBytes counts Printed's text.
	printedBytes int
	// lastProgress is when a progress event was last published; a timer
	// publishes the latest value once the interval has passed.
	lastProgress  time.Time
	progressTimer *time.Timer
}

const keepCalls = 200

// Bounds of what a call keeps and publishes.
const (
	// maxPrintedBytes bounds the printed text a call keeps.
	maxPrintedBytes = 32 << 10
	// maxPrintedPieces bounds the pieces it is kept in.
	maxPrintedPieces = 1000
	// progressInterval is the least time between two progress events of
	// a call in the page's stream (the latest value always comes).
	progressInterval = 100 * time.Millisecond
)

// callRequest is the body of POST /api/calls.
type callRequest struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Context json.RawMessage `json:"context"`
}

// handleCalls starts a call in the background: 202 with the call; its end
// comes as a call event.
func (s *Server) handleCalls(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) || !s.guardAPI(w, r) {
		return
	}
	var req callRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if req.Tool == "" {
		writeError(w, http.StatusBadRequest, `"tool" must be a tool name`)
		return
	}
	args := bytes.TrimSpace(req.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' {
		writeError(w, http.StatusBadRequest, `"args" must be a JSON object`)
		return
	}
	toolCtx := s.opts.Context
	if c := bytes.TrimSpace(req.Context); len(c) > 0 && string(c) != "null" {
		if c[0] != '{' {
			writeError(w, http.StatusBadRequest, `"context" must be a JSON object`)
			return
		}
		if err := json.Unmarshal(c, &toolCtx); err != nil {
			writeError(w, http.StatusBadRequest, `"context": `+err.Error())
			return
		}
	}
	known, err := s.hasTool(r.Context(), req.Tool)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "listing the tools: "+err.Error())
		return
	}
	if !known {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Tool '%s' not found.", truncate(req.Tool, 200)))
		return
	}
	if s.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		writeError(w, http.StatusTooManyRequests, "too many calls in flight ("+strconv.Itoa(s.opts.MaxCalls)+"); wait for one to finish")
		return
	}

	ctx, cancel := context.WithCancel(s.baseCtx)
	c := &call{Call: Call{ID: tool.NewID(), Tool: req.Tool, Args: json.RawMessage(args), State: "running", Started: time.Now()}, cancel: cancel}
	s.mu.Lock()
	if s.closed || s.draining.Load() {
		s.mu.Unlock()
		cancel()
		<-s.slots
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	s.calls[c.ID] = c
	s.order = append(s.order, c.ID)
	s.running.Add(1)
	view := c.Call
	s.hub.publish(Event{Type: EventCall, Call: &view})
	s.mu.Unlock()

	go s.run(ctx, c, toolCtx)
	writeJSON(w, http.StatusAccepted, view)
}

// run makes the call and publishes its end.
func (s *Server) run(ctx context.Context, c *call, toolCtx map[string]any) {
	defer s.running.Done()
	defer func() { <-s.slots }()
	defer c.cancel()
	res, err := tool.Call(ctx, s.ts, c.Tool, c.Args, &tool.CallOptions{
		CallID:    c.ID,
		Workspace: s.opts.Workspace,
		Context:   toolCtx,
		Respond:   s.broker.Respond,
		OnResponse: func(r *tool.Request, resp tool.Response) {
			s.waitLogged(r.ID)
			if rejected(r, resp) {
				s.mu.Lock()
				c.Rejected = &Rejection{Label: r.Label, Reason: resp.Reason}
				s.mu.Unlock()
			}
		},
		OnEvent: s.Event,
	})
	engineErr := err != nil
	if err != nil {
		res = tool.ErrorResult(err)
	}
	raw, merr := s.resultJSON(res)
	if merr != nil {
		engineErr = true
		raw, _ = json.Marshal(tool.ErrorResult(fmt.Errorf("the result cannot be shown: %w", merr)))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.State, c.Finished, c.Result, c.EngineError = "done", time.Now(), raw, engineErr
	if c.progressTimer != nil {
		c.progressTimer.Stop() // the call event carries the latest progress
		c.progressTimer = nil
	}
	view := c.Call
	if !s.closed {
		s.hub.publish(Event{Type: EventCall, Call: &view})
	}
	s.pruneLocked()
}

// rejected reports whether resp declines the confirmation r.
func rejected(r *tool.Request, resp tool.Response) bool {
	if r.Kind != tool.KindConfirm {
		return false
	}
	switch resp.Action {
	case tool.Decline:
		return true
	case tool.Submit:
		d, _ := resp.Value.(tool.Decision)
		if s, ok := resp.Value.(string); ok {
			d = tool.Decision(s)
		}
		return d == tool.Reject
	}
	return false
}

// record adds what a call printed or logged to its record and tells the
// pages; the caller holds mu. A piece over the bounds is counted, not
// kept: the event still carries it.
func (s *Server) record(c *call, stream, text string) {
	if c.printedBytes+len(text) > maxPrintedBytes || len(c.Printed) >= maxPrintedPieces {
		c.PrintedDropped += int64(len(text))
		return
	}
	c.Printed = append(c.Printed, Printed{Stream: stream, Text: text})
	c.printedBytes += len(text)
}

// progress records the progress of a running call and publishes it, at
// most every progressInterval (a timer publishes the latest value when
// reports come faster); the caller holds mu.
func (s *Server) progress(c *call, p *Progress) {
	c.Progress = p
	if c.progressTimer != nil {
		return // the timer publishes the latest
	}
	wait := progressInterval - time.Since(c.lastProgress)
	if wait <= 0 {
		s.publishProgress(c)
		return
	}
	c.progressTimer = time.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c.progressTimer == nil || s.closed || c.State != "running" {
			return
		}
		c.progressTimer = nil
		s.publishProgress(c)
	})
}

func (s *Server) publishProgress(c *call) {
	c.lastProgress = time.Now()
	p := c.Progress
	s.hub.publish(Event{Type: EventProgress, Progress: &ProgressEvent{CallID: c.ID, Tool: c.Tool, Progress: p.Progress, Total: p.Total, Message: p.Message}})
}

// resultJSON is the result object as the page shows it: an output longer
// than MaxResultBytes is cut, and says so.
func (s *Server) resultJSON(res *tool.Result) (json.RawMessage, error) {
	raw, err := json.Marshal(res)
	if err != nil || len(raw) <= s.opts.MaxResultBytes {
		return raw, err
	}
	cut := *res
	// A string output is cut as text; anything else as its JSON.
	out := string(res.Output)
	var text string
	if json.Unmarshal(res.Output, &text) == nil {
		out = text
	}
	keep := cutUTF8(out, s.opts.MaxResultBytes/2)
	cut.Output, _ = json.Marshal(keep + fmt.Sprintf("… (%d more bytes not shown)", len(out)-len(keep)))
	cut.Payload = map[string]json.RawMessage{}
	for k, v := range res.Payload {
		if len(v) > s.opts.MaxResultBytes/8 {
			v, _ = json.Marshal(fmt.Sprintf("(%d bytes not shown)", len(v)))
		}
		cut.Payload[k] = v
	}
	return json.Marshal(&cut)
}

// pruneLocked forgets the oldest finished calls beyond keepCalls.
func (s *Server) pruneLocked() {
	for len(s.order) > keepCalls {
		i := -1
		for j, id := range s.order {
			if s.calls[id].State == "done" {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
		delete(s.calls, s.order[i])
		s.order = append(s.order[:i], s.order[i+1:]...)
	}
}

// handleCancel cancels a running call: its pending requests are withdrawn
// and it ends with status 499.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) || !s.guardAPI(w, r) {
		return
	}
	if !s.drainEmptyBody(w, r) {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	c := s.calls[id]
	running := c != nil && c.State == "running"
	s.mu.Unlock()
	switch {
	case c == nil:
		writeError(w, http.StatusNotFound, "no such call: "+truncate(id, 100))
	case !running:
		writeError(w, http.StatusConflict, "the call has already finished")
	default:
		c.cancel()
		writeJSON(w, http.StatusOK, map[string]any{"cancelled": id})
	}
}

// hasTool reports whether the toolset lists name.
func (s *Server) hasTool(ctx context.Context, name string) (bool, error) {
	infos, err := s.ts.Tools(ctx)
	if err != nil {
		return false, err
	}
	for i := range infos {
		if infos[i].Name == name {
			return true, nil
		}
	}
	return false, nil
}

// decodeBody reads a JSON object body into v: at most MaxBodyBytes, no
// unknown fields, nothing after it. It writes the refusal and reports
// false when the body is not acceptable.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !isJSONType(ct) {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return false
	}
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeDecodeError(w, err)
		return false
	}
	if _, err := dec.Token(); err == nil {
		writeError(w, http.StatusBadRequest, "malformed JSON: data after the object")
		return false
	} else if !errors.Is(err, errEOF) {
		writeDecodeError(w, err)
		return false
	}
	return true
}

// drainEmptyBody accepts a request whose body is empty or a JSON object
// that is ignored (POST endpoints without parameters).
func (s *Server) drainEmptyBody(w http.ResponseWriter, r *http.Request) bool {
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body); err != nil {
		writeDecodeError(w, err)
		return false
	}
	if b := bytes.TrimSpace(buf.Bytes()); len(b) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			writeError(w, http.StatusBadRequest, "malformed JSON: the body must be empty or an object")
			return false
		}
	}
	return true
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
