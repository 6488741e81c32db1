package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/lcptools/lcp/tool"
)

// This file is the bridge to the seeds' handler shapes: the dict an LCP
// tool passes to user_interaction_handler, the (decision, reason) pair
// confirm_handler returns, and the blocking callbacks of embedders.

// ParseInteraction reads the request an LCP tool gave its
// user_interaction_handler, as JSON: {"type": "text"|"secret"|"select",
// "title", "prompt", "options", "default"}, plus the lcp extension
// "multiline": true for text. A missing or null type is "text" (as the
// seeds' terminal handler reads it); title, prompt and default must be
// strings or null, options a list of strings; other keys are ignored. A
// select's default that is not one of its options is dropped (it
// preselects nothing). The error, a *tool.InvalidInteractionError, says
// what is wrong in words a tool author understands.
func ParseInteraction(data []byte) (*tool.Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, invalid("the interaction request must be a JSON object (a dict)")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("the interaction request must be one JSON object")
	}
	return RequestFromMap(m)
}

// RequestFromMap is ParseInteraction for a request already decoded.
func RequestFromMap(m map[string]any) (*tool.Request, error) {
	if m == nil {
		return nil, invalid("the interaction request must be a dict, not None")
	}
	r := &tool.Request{Kind: tool.KindText}
	str := func(key string) (string, bool, error) {
		v, ok := m[key]
		if !ok || v == nil {
			return "", false, nil
		}
		s, ok := v.(string)
		if !ok {
			return "", false, invalid(fmt.Sprintf("%q must be a string, not %s", key, typeName(v)))
		}
		return s, true, nil
	}
	kind, ok, err := str("type")
	if err != nil {
		return nil, err
	}
	if ok {
		switch k := tool.Kind(kind); k {
		case tool.KindText, tool.KindSecret, tool.KindSelect:
			r.Kind = k
		default:
			return nil, invalid(fmt.Sprintf("unknown interaction type %q (want text, secret or select)", kind))
		}
	}
	if r.Title, _, err = str("title"); err != nil {
		return nil, err
	}
	if r.Prompt, _, err = str("prompt"); err != nil {
		return nil, err
	}
	if def, ok, err := str("default"); err != nil {
		return nil, err
	} else if ok {
		r.Default = &def
	}
	if v, ok := m["options"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, invalid(fmt.Sprintf(`"options" must be a list of strings, not %s`, typeName(v)))
		}
		for i, o := range list {
			s, ok := o.(string)
			if !ok {
				return nil, invalid(fmt.Sprintf(`"options"[%d] must be a string, not %s`, i, typeName(o)))
			}
			r.Options = append(r.Options, s)
		}
	}
	if v, ok := m["multiline"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, invalid(fmt.Sprintf(`"multiline" must be a bool, not %s`, typeName(v)))
		}
		r.Multiline = b && r.Kind == tool.KindText
	}
	if r.Kind == tool.KindSelect {
		if len(r.Options) == 0 {
			return nil, invalid(`a "select" request needs a non-empty "options" list`)
		}
		if r.Default != nil && !slices.Contains(r.Options, *r.Default) {
			r.Default = nil
		}
	}
	return r, nil
}

func invalid(msg string) error { return &tool.InvalidInteractionError{Message: msg} }

// typeName names a decoded JSON value's type as a Python author knows it.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a str"
	case bool:
		return "a bool"
	case json.Number, float64, int:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a dict"
	}
	return fmt.Sprintf("a %T", v)
}

// InteractionMap returns r as the seeds' request dict: "type", "title",
// "prompt", "options" (a list, empty when there are none), "default" (nil
// when there is none), and "multiline": true for multiline text.
func InteractionMap(r *tool.Request) map[string]any {
	m := map[string]any{
		"type":    string(r.Kind),
		"title":   r.Title,
		"prompt":  r.Prompt,
		"options": append([]string{}, r.Options...),
		"default": nil,
	}
	if r.Default != nil {
		m["default"] = *r.Default
	}
	if r.Multiline {
		m["multiline"] = true
	}
	return m
}

// ConfirmReply turns the answer to a confirmation into the seeds'
// (decision, reason): "allow" or "always" when approved, else "reject"
// with the reason.
func ConfirmReply(resp tool.Response) (decision, reason string) {
	if resp.Action == tool.Submit {
		switch d := fmt.Sprint(resp.Value); tool.Decision(d) {
		case tool.Allow, tool.Always:
			return d, resp.Reason
		}
	}
	return string(tool.Reject), resp.Reason
}

// InteractionReply turns the answer to a question into what an LCP tool's
// user_interaction_handler returns: the string, or nil (None) when it was
// declined, cancelled or timed out.
func InteractionReply(resp tool.Response) *string {
	if resp.Action != tool.Submit {
		return nil
	}
	s, ok := resp.Value.(string)
	if !ok {
		return nil
	}
	return &s
}
