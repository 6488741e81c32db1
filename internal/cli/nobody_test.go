package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/tool"
)

// Every front end that finds nobody to ask answers the same way
// (tool.Nobody): a confirmation is refused and never approved, a question
// is declined unless it carries its own default, a secret and a form are
// declined, and the reason says why nobody could answer and how to
// approve without a person.
func TestNobodyCanAnswerOnEveryFrontEnd(t *testing.T) {
	ask := hitl.Policy{Approve: hitl.ApproveAsk, RejectReason: rejectedByFlag}
	// respondVia returns how a front end answers a request.
	type respondVia func(t *testing.T, r *tool.Request) tool.Response
	brokerOf := func(fe hitl.FrontEnd) respondVia {
		return func(t *testing.T, r *tool.Request) tool.Response {
			b := hitl.New(fe, &hitl.Options{Policy: ask})
			defer b.Close()
			return b.Respond(context.Background(), r)
		}
	}
	frontEnds := []struct {
		name string
		via  respondVia
		why  string // the reason's why
		hint string // the confirmation's hint
	}{
		{"lcp call without a terminal", func(t *testing.T, r *tool.Request) tool.Response {
			env := testEnv()
			b, cleanup, err := terminalBroker(env, &approvalFlags{approve: "ask"}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			return b.Respond(context.Background(), r)
		}, hitl.NoTerminal, approveHint},
		{"lcp chat without a terminal", func(t *testing.T, r *tool.Request) tool.Response {
			env := testEnv()
			b, cleanup, err := terminalBroker(env, &approvalFlags{approve: "ask"}, false, newLive(env, false).frontEnd)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			return b.Respond(context.Background(), r)
		}, hitl.NoTerminal, approveHint},
		{"lcp call --batch - without a controlling terminal", func(t *testing.T, r *tool.Request) tool.Response {
			env := testEnv()
			b, cleanup, err := terminalBroker(env, &approvalFlags{approve: "ask"}, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			return b.Respond(context.Background(), r)
		}, hitl.NoTerminal, approveHint},
		{"lcp mcp, a client without elicitation", func(_ *testing.T, r *tool.Request) tool.Response {
			return mcpUnattended(ask)(context.Background(), r, `"cli"`)
		}, mcp.NoElicitation(`"cli"`), mcpApproveHint},
		{"an MCP server's default", func(_ *testing.T, r *tool.Request) tool.Response {
			return mcp.RejectUnattended(context.Background(), r, `"cli"`)
		}, mcp.NoElicitation(`"cli"`), tool.DefaultHint},
		{"a library host without handlers", func(t *testing.T, r *tool.Request) tool.Response {
			return driveAsking(t, r, nil)
		}, tool.NoPerson, tool.DefaultHint},
		{"a library host with the broker's Unattended", brokerOf(hitl.Unattended{}), hitl.NoTerminal, tool.DefaultHint},
		{"the seeds' callbacks, none given", brokerOf(hitl.Callbacks{}), "the host", tool.DefaultHint},
	}
	def := "fallback"
	requests := []struct {
		name   string
		req    tool.Request
		action tool.Action
		value  any
		reason string // the reason's start, before the why
	}{
		{"confirmation", tool.Request{Kind: tool.KindConfirm, Label: "deploy"}, tool.Decline, nil, `Not approved: nobody can approve "deploy" (`},
		{"text with a default", tool.Request{Kind: tool.KindText, Default: &def}, tool.Submit, def, ""},
		{"text without one", tool.Request{Kind: tool.KindText}, tool.Decline, nil, "Not answered: nobody can answer the question ("},
		{"select with a default", tool.Request{Kind: tool.KindSelect, Options: []string{"a", def}, Default: &def}, tool.Submit, def, ""},
		{"select whose default is no option", tool.Request{Kind: tool.KindSelect, Options: []string{"a"}, Default: &def}, tool.Decline, nil, "Not answered: nobody can answer the question ("},
		{"secret, even with a default", tool.Request{Kind: tool.KindSecret, Default: &def}, tool.Decline, nil, "Not answered: nobody can enter the secret ("},
		{"form", tool.Request{Kind: tool.KindForm, Schema: json.RawMessage(`{"type":"object"}`)}, tool.Decline, nil, "Not answered: nobody can answer the question ("},
	}
	for _, fe := range frontEnds {
		for _, rq := range requests {
			t.Run(fe.name+"/"+rq.name, func(t *testing.T) {
				r := rq.req
				r.ID, r.Tool = tool.NewID(), "tool_x"
				resp := fe.via(t, &r)
				if resp.ID != r.ID || resp.Action != rq.action || resp.Value != rq.value {
					t.Fatalf("got %s %v (%q), want %s %v", resp.Action, resp.Value, resp.Reason, rq.action, rq.value)
				}
				if rq.reason == "" {
					return
				}
				if !strings.HasPrefix(resp.Reason, rq.reason) {
					t.Errorf("reason %q, want it to start with %q", resp.Reason, rq.reason)
				}
				if !strings.Contains(resp.Reason, "("+fe.why) {
					t.Errorf("reason %q does not say why (%q)", resp.Reason, fe.why)
				}
				if r.Kind == tool.KindConfirm && !strings.HasSuffix(resp.Reason, "; "+fe.hint+".") {
					t.Errorf("reason %q does not end with the hint %q", resp.Reason, fe.hint)
				}
			})
		}
	}
}

// driveAsking runs a call whose tool asks r, through tool.Drive with
// opts, and returns the answer the tool got.
func driveAsking(t *testing.T, r *tool.Request, opts *tool.CallOptions) tool.Response {
	t.Helper()
	info := &tool.Info{Name: "tool_x", Interactions: tool.AllInteractions}
	var got tool.Response
	h := tool.NewHandler(info, func(ctx context.Context, c *tool.CallRequest) (*tool.Result, error) {
		resp, err := c.Ask(ctx, r)
		if err != nil {
			return nil, err
		}
		got = resp
		return &tool.Result{Success: true}, nil
	}, nil)
	if _, err := tool.Drive(context.Background(), h, nil, opts); err != nil {
		t.Fatal(err)
	}
	return got
}
