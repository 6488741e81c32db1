package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// This file maps between MCP elicitation and lcp requests, both ways:
// an elicitation of an MCP server becomes a tool.Request of the calling
// tool (client side), and a tool.Request of a served tool becomes an
// elicitation to the MCP client (server side).

// The actions of an MCP elicitation result.
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
)

// answerField is the property that carries the answer of a text or
// select question sent as a one-field form.
const answerField = "value"

// incoming is an elicitation of an MCP server turned into a request.
type incoming struct {
	req *tool.Request
	// field is the property a text or select answer goes into; empty for
	// forms and URL elicitations.
	field string
	url   bool
	// props are the properties of a form, for their defaults.
	props map[string]any
}

// fromElicit turns an MCP server's elicitation into the request the person
// answers: a confirmation to open the link for URL mode; for a form with a
// single string property, a select (when it has an enum) or a text
// question; a form otherwise.
func fromElicit(p *sdk.ElicitParams) (*incoming, error) {
	if p == nil {
		return nil, fmt.Errorf("empty elicitation")
	}
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		if p.URL == "" {
			return nil, fmt.Errorf("a URL elicitation without a URL")
		}
		return &incoming{url: true, req: &tool.Request{
			Kind:   tool.KindConfirm,
			Title:  "Open a link",
			Prompt: p.Message,
			Label:  "open " + p.URL,
			Source: p.URL,
		}}, nil
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if p.RequestedSchema != nil {
		raw, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("elicitation schema: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("the elicitation schema is not a JSON object")
		}
		schema = m
	}
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 1 {
		for name, v := range props {
			prop, _ := v.(map[string]any)
			if prop == nil || (prop["type"] != nil && prop["type"] != "string") {
				break
			}
			title, _ := prop["title"].(string)
			desc, _ := prop["description"].(string)
			r := &tool.Request{Title: title, Prompt: joinText(p.Message, desc)}
			if def, ok := prop["default"].(string); ok {
				r.Default = &def
			}
			if opts, titles := stringOptions(prop); len(opts) > 0 {
				r.Kind, r.Options, r.OptionTitles = tool.KindSelect, opts, titles
				if r.Default != nil && !slices.Contains(opts, *r.Default) {
					r.Default = nil
				}
			} else {
				r.Kind = tool.KindText
			}
			return &incoming{req: r, field: name}, nil
		}
	}
	raw, _ := json.Marshal(schema)
	return &incoming{props: props, req: &tool.Request{
		Kind:     tool.KindForm,
		Prompt:   p.Message,
		Schema:   raw,
		Validate: true,
	}}, nil
}

// stringOptions returns the choices of a string property — its enum, or
// the consts of its oneOf/anyOf — and their titles (the legacy enumNames,
// or the consts' titles: SEP-1330), nil when none differs from its value.
func stringOptions(prop map[string]any) (values, titles []string) {
	if enum, ok := prop["enum"].([]any); ok {
		names, _ := prop["enumNames"].([]any)
		for i, e := range enum {
			s, ok := e.(string)
			if !ok {
				continue
			}
			values = append(values, s)
			title := s
			if len(names) == len(enum) {
				if n, ok := names[i].(string); ok && n != "" {
					title = n
				}
			}
			titles = append(titles, title)
		}
		return values, titlesIfAny(values, titles)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := prop[key].([]any)
		for _, a := range alts {
			m, _ := a.(map[string]any)
			if s, ok := m["const"].(string); ok {
				title, _ := m["title"].(string)
				if title == "" {
					title = s
				}
				values, titles = append(values, s), append(titles, title)
			}
		}
		if len(values) > 0 {
			return values, titlesIfAny(values, titles)
		}
	}
	return nil, nil
}

// titlesIfAny returns titles when one of them differs from its value.
func titlesIfAny(values, titles []string) []string {
	for i := range values {
		if titles[i] != values[i] {
			return titles
		}
	}
	return nil
}

// result turns the person's answer into the elicitation result for the
// MCP server.
func (in *incoming) result(resp tool.Response) *sdk.ElicitResult {
	switch resp.Action {
	case tool.Decline:
		return &sdk.ElicitResult{Action: actionDecline}
	case tool.Cancel:
		return &sdk.ElicitResult{Action: actionCancel}
	}
	switch {
	case in.url:
		if d := decisionOf(resp.Value); d == tool.Allow || d == tool.Always {
			return &sdk.ElicitResult{Action: actionAccept}
		}
		return &sdk.ElicitResult{Action: actionDecline}
	case in.field != "":
		s, ok := resp.Value.(string)
		if !ok {
			return &sdk.ElicitResult{Action: actionDecline}
		}
		return &sdk.ElicitResult{Action: actionAccept, Content: map[string]any{in.field: s}}
	}
	switch v := resp.Value.(type) {
	case map[string]any:
		return &sdk.ElicitResult{Action: actionAccept, Content: in.withDefaults(plainJSON(v).(map[string]any))}
	case json.RawMessage:
		var m map[string]any
		if json.Unmarshal(v, &m) == nil && m != nil {
			return &sdk.ElicitResult{Action: actionAccept, Content: in.withDefaults(m)}
		}
	}
	return &sdk.ElicitResult{Action: actionDecline}
}

// plainJSON returns v with its numbers as int64 or float64: front ends
// keep typed numbers exact as json.Number, which is a string to Go's
// reflection — and so to the SDK's check of the answer against the
// form's schema, which would refuse an integer typed as 5.
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	}
	return v
}

// withDefaults fills the fields the person left out with the defaults of
// the form's schema, as SEP-1034 asks of a client that accepts a form:
// the server gets the values the person saw preselected.
func (in *incoming) withDefaults(content map[string]any) map[string]any {
	var out map[string]any
	for name, p := range in.props {
		prop, _ := p.(map[string]any)
		def, ok := prop["default"]
		if !ok || def == nil {
			continue
		}
		if _, given := content[name]; given {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(content)+len(in.props))
			for k, v := range content {
				out[k] = v
			}
		}
		out[name] = def
	}
	if out == nil {
		return content
	}
	return out
}

func decisionOf(v any) tool.Decision {
	switch d := v.(type) {
	case tool.Decision:
		return d
	case string:
		return tool.Decision(d)
	}
	return ""
}

// The form lcp sends to approve an action.
const (
	decisionField = "decision"
	reasonField   = "reason"
)

// toElicit turns a request of a served tool into a form elicitation for the
// MCP client. Secrets are never sent this way (see secretPage).
func toElicit(r *tool.Request) (*sdk.ElicitParams, error) {
	switch r.Kind {
	case tool.KindConfirm:
		return &sdk.ElicitParams{Mode: "form", Message: confirmMessage(r), RequestedSchema: confirmSchema}, nil
	case tool.KindText, tool.KindSelect:
		prop := map[string]any{"type": "string"}
		title := r.Title
		if title == "" {
			title = "Answer"
		}
		prop["title"] = title
		if r.Prompt != "" {
			prop["description"] = r.Prompt
		}
		if r.Kind == tool.KindSelect {
			prop["enum"] = r.Options
			if len(r.OptionTitles) == len(r.Options) {
				// The titled form every revision reads (deprecated by
				// SEP-1330 in favour of oneOf, which older clients lack).
				prop["enumNames"] = r.OptionTitles
			}
		}
		if r.Default != nil {
			prop["default"] = *r.Default
		}
		schema := map[string]any{
			"type":       "object",
			"properties": map[string]any{answerField: prop},
			"required":   []string{answerField},
		}
		return &sdk.ElicitParams{Mode: "form", Message: questionMessage(r), RequestedSchema: schema}, nil
	case tool.KindForm:
		return &sdk.ElicitParams{Mode: "form", Message: questionMessage(r), RequestedSchema: json.RawMessage(r.Schema)}, nil
	}
	return nil, fmt.Errorf("a %s request cannot be sent as a form elicitation", r.Kind)
}

var confirmSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","title":"Decision","description":"allow: this time only; always: also later in this session; reject: do not run it","enum":["allow","always","reject"]},` +
	`"reason":{"type":"string","title":"Reason","description":"Optional: why you reject it, for the assistant"}},` +
	`"required":["decision"]}`)

func confirmMessage(r *tool.Request) string {
	var b strings.Builder
	what := r.Label
	if what == "" {
		what = r.Title
	}
	fmt.Fprintf(&b, "The tool %s asks for approval", r.Tool)
	if what != "" {
		fmt.Fprintf(&b, ": %s", what)
	}
	b.WriteString(".")
	if r.Source != "" {
		b.WriteString("\n\n" + r.Source)
	}
	if len(r.Argv) > 0 {
		b.WriteString("\n\nArguments: " + strings.Join(r.Argv, " "))
	}
	if r.Prompt != "" && r.Prompt != r.Source {
		b.WriteString("\n\n" + r.Prompt)
	}
	return b.String()
}

func questionMessage(r *tool.Request) string {
	msg := r.Prompt
	if msg == "" {
		msg = r.Title
	}
	if msg == "" {
		msg = "The tool " + r.Tool + " asks a question."
	}
	return msg
}

// fromResult turns the MCP client's answer to a form elicitation into the
// response to r.
func fromResult(r *tool.Request, res *sdk.ElicitResult) tool.Response {
	if r.Kind == tool.KindConfirm {
		switch res.Action {
		case actionAccept:
		case actionCancel:
			return r.Declined("The user dismissed the approval request.")
		default:
			return r.Declined("The user declined the approval request.")
		}
		d, _ := res.Content[decisionField].(string)
		reason, _ := res.Content[reasonField].(string)
		switch tool.Decision(d) {
		case tool.Allow, tool.Always:
			return r.Submitted(tool.Decision(d))
		}
		if reason == "" {
			reason = "The user rejected the action."
		}
		return r.Declined(reason)
	}
	switch res.Action {
	case actionAccept:
	case actionCancel:
		return r.Cancelled("The user dismissed the question.")
	default:
		return r.Declined("The user declined to answer.")
	}
	switch r.Kind {
	case tool.KindText, tool.KindSelect:
		s, ok := res.Content[answerField].(string)
		if !ok {
			return r.Declined("The MCP client sent no answer.")
		}
		if r.Kind == tool.KindSelect && !slices.Contains(r.Options, s) {
			return r.Declined(fmt.Sprintf("The MCP client answered %q, which is not one of the options.", s))
		}
		return r.Submitted(s)
	case tool.KindForm:
		content := res.Content
		if content == nil {
			content = map[string]any{}
		}
		return r.Submitted(content)
	}
	return r.Declined("This request cannot be answered through MCP.")
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || b == a:
		return a
	}
	return a + "\n\n" + b
}
