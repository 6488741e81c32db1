package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Result is the normalized outcome of a completed call: the LCP result
// object of SPEC §7, whatever backend produced it.
type Result struct {
	// Success is false for a tool-authored failure.
	Success bool
	// StatusCode is 200 on success and 500 on a tool failure; results made
	// from engine errors by ErrorResult carry 400, 404, 499 or 504 too.
	StatusCode int
	// Output is what the LLM reads, as JSON.
	Output json.RawMessage
	// Error is the failure text; empty on success.
	Error string
	// Payload holds every other key of the result object, as JSON:
	// prompt_injection, traceback, file names, counts, and the tool's own
	// "error" value on a success.
	Payload map[string]json.RawMessage
	// Structured is the structured value of the result, unnormalized: a
	// tool's value checked against its output schema (typed native
	// tools, MCP structuredContent), or the JSON value a native tool
	// returned without a schema (see JSON): anything but text.
	Structured json.RawMessage
	// Content, when set, is the whole result as content blocks, in order
	// (text blocks included): images, sounds, embedded resources, links.
	// MCP clients get exactly these blocks; the LLM reads Output, which
	// for a result made of blocks is TextOf them. Its JSON is the
	// result object's ContentKey.
	Content []Content
	// Rejection is set by Drive on a failed result when the last
	// confirmation the call asked for was declined: the call was refused
	// rather than broken. It is not part of the result object (read it
	// with RejectionOf).
	Rejection *Rejection
}

// Text returns what an LLM should read: the output (a JSON string as its
// text, anything else as compact JSON) on success, the error on failure.
func (r *Result) Text() string {
	if !r.Success {
		return r.Error
	}
	return rawText(r.Output)
}

// PromptInjection returns the result's prompt_injection text, if any: the
// guidance a tool appends to what the LLM reads next.
func (r *Result) PromptInjection() string {
	raw, ok := r.Payload["prompt_injection"]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// Traceback returns the Python traceback of a failed call, if any.
func (r *Result) Traceback() string {
	var s string
	_ = json.Unmarshal(r.Payload["traceback"], &s)
	return s
}

// rawText renders a JSON value for people (what the LLM reads, error
// texts): a string as itself, anything else as compact JSON, "null" when
// empty; never invalid UTF-8.
func rawText(raw json.RawMessage) string {
	return strings.ToValidUTF8(rawText1(raw), "\uFFFD")
}

func rawText1(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// MarshalJSON writes the LCP result object: the payload keys (with
// Content as ContentKey), then "output", "success", "status_code" and, on
// failure, "error".
func (r *Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	keys := make([]string, 0, len(r.Payload)+1)
	for k := range r.Payload {
		switch k {
		case "output", "success", "status_code", ContentKey:
			continue
		case "error":
			if !r.Success {
				continue
			}
		}
		keys = append(keys, k)
	}
	var content json.RawMessage
	if len(r.Content) > 0 {
		var err error
		if content, err = marshalContent(r.Content); err != nil {
			return nil, err
		}
		keys = append(keys, ContentKey)
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeJSONString(&b, k)
		b.WriteByte(':')
		v := r.Payload[k]
		if k == ContentKey {
			v = content
		}
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		b.Write(v)
		b.WriteByte(',')
	}
	out := r.Output
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	b.WriteString(`"output":`)
	b.Write(out)
	if r.Success {
		b.WriteString(`,"success":true`)
	} else {
		b.WriteString(`,"success":false`)
	}
	fmt.Fprintf(&b, `,"status_code":%d`, r.StatusCode)
	if !r.Success {
		b.WriteString(`,"error":`)
		writeJSONString(&b, r.Error)
	}
	b.WriteByte('}')
	// Payload values come from tools and peers; make sure the whole is JSON.
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("result holds invalid JSON")
	}
	return b.Bytes(), nil
}

// UnmarshalJSON reads an LCP result object (as MarshalJSON writes it, or as
// the Python reference returns it). ContentKey becomes Content; content
// lcp cannot carry is an error.
func (r *Result) UnmarshalJSON(data []byte) error {
	if !json.Valid(data) {
		return errors.New("result: not valid JSON")
	}
	fields, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	*r = Result{Success: true, StatusCode: 200, Output: json.RawMessage("null")}
	for _, f := range fields {
		switch f.key {
		case "output":
			r.Output = f.value
		case "success":
			r.Success = string(f.value) == "true"
		case "status_code":
			var n int
			if json.Unmarshal(f.value, &n) == nil {
				r.StatusCode = n
			}
		case ContentKey:
			if isNull(f.value) {
				continue
			}
			blocks, err := ParseContent(f.value)
			if err != nil {
				return fmt.Errorf("result: %w", err)
			}
			r.Content = blocks
		default:
			if r.Payload == nil {
				r.Payload = make(map[string]json.RawMessage)
			}
			r.Payload[f.key] = f.value
		}
	}
	if !r.Success {
		if e, ok := r.Payload["error"]; ok {
			var s string
			if json.Unmarshal(e, &s) == nil {
				r.Error = s
			} else {
				r.Error = rawText(e)
			}
			delete(r.Payload, "error")
		}
	}
	return nil
}

// ErrorResult returns the LCP result object for an engine error, for hosts
// that want one shape for every outcome: 404 for an unknown tool, 400 for
// invalid arguments, 499 for a cancelled call, 504 for a timeout, 500 for
// the rest. The error text is the error's message.
func ErrorResult(err error) *Result {
	code := 500
	var (
		unknown *UnknownToolError
		invalid *InvalidArgumentsError
		cancel  *CancelledError
		timeout *TimeoutError
	)
	switch {
	case errors.As(err, &unknown):
		code = 404
	case errors.As(err, &invalid):
		code = 400
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded):
		code = 504
	case errors.As(err, &cancel), errors.Is(err, context.Canceled):
		code = 499
	}
	msg := err.Error()
	out, _ := json.Marshal(msg)
	return &Result{Success: false, StatusCode: code, Output: out, Error: msg}
}

// JSON returns the successful result of a JSON value, as tools-kit's
// ToolResult::json: v, marshalled, is both what the LLM reads and the
// structured value (Structured), with or without an output schema.
func JSON(v any) (*Result, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("tool: result: %w", err)
	}
	return &Result{Success: true, StatusCode: 200, Output: raw, Structured: raw}, nil
}

// Failure returns a failed result with the given error text, as a tool
// that returned {"success": false, "error": msg} would get.
func Failure(msg string) *Result {
	out, _ := json.Marshal(msg)
	return &Result{Success: false, StatusCode: 500, Output: out, Error: msg}
}

// marshalContent writes blocks as a JSON array, each checked.
func marshalContent(blocks []Content) (json.RawMessage, error) {
	if err := CheckContent(blocks); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range blocks {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := blocks[i].MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
		b.Write(raw)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}
