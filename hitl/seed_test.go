package hitl_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

func TestParseInteraction(t *testing.T) {
	tests := []struct {
		in   string
		want *tool.Request
		err  string
	}{
		{`{"type":"select","title":"Deployment strategy","prompt":"Choose:","options":["blue-green","rolling","canary"],"default":"canary"}`,
			&tool.Request{Kind: tool.KindSelect, Title: "Deployment strategy", Prompt: "Choose:", Options: []string{"blue-green", "rolling", "canary"}, Default: ptr("canary")}, ""},
		{`{"type":"secret","title":"Registry credentials","prompt":"Key:"}`, &tool.Request{Kind: tool.KindSecret, Title: "Registry credentials", Prompt: "Key:"}, ""},
		{`{"type":"text","prompt":"Tag?","default":"latest","options":[]}`, &tool.Request{Kind: tool.KindText, Prompt: "Tag?", Default: ptr("latest")}, ""},
		{`{"prompt":"no type means text"}`, &tool.Request{Kind: tool.KindText, Prompt: "no type means text"}, ""},
		{`{"type":null,"default":null,"options":null}`, &tool.Request{Kind: tool.KindText}, ""},
		{`{"type":"text","multiline":true}`, &tool.Request{Kind: tool.KindText, Multiline: true}, ""},
		{`{"type":"select","options":["a"],"default":"z"}`, &tool.Request{Kind: tool.KindSelect, Options: []string{"a"}}, ""},
		{`{"type":"text","extra":{"ignored":1}}`, &tool.Request{Kind: tool.KindText}, ""},
		{`{"type":"select","title":"t"}`, nil, `a "select" request needs a non-empty "options" list`},
		{`{"type":"select","options":[]}`, nil, `needs a non-empty "options" list`},
		{`{"type":"color"}`, nil, `unknown interaction type "color" (want text, secret or select)`},
		{`{"type":"form"}`, nil, `unknown interaction type "form"`},
		{`{"type":3}`, nil, `"type" must be a string, not a number`},
		{`{"title":["x"]}`, nil, `"title" must be a string, not a list`},
		{`{"type":"select","options":"abc"}`, nil, `"options" must be a list of strings, not a str`},
		{`{"type":"select","options":["a",1]}`, nil, `"options"[1] must be a string, not a number`},
		{`{"multiline":"yes"}`, nil, `"multiline" must be a bool`},
		{`null`, nil, "must be a JSON object"},
		{`["text"]`, nil, "must be a JSON object"},
		{`{} {}`, nil, "one JSON object"},
		{`{`, nil, "must be a JSON object"},
	}
	for _, tt := range tests {
		got, err := hitl.ParseInteraction([]byte(tt.in))
		if tt.err != "" {
			var inv *tool.InvalidInteractionError
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseInteraction(%s) error = %v, want one containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseInteraction(%s): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseInteraction(%s) mismatch (-want +got):\n%s", tt.in, diff)
		}
		if err := got.Check(); err != nil {
			t.Errorf("ParseInteraction(%s) gave a request that fails Check: %v", tt.in, err)
		}
	}
}

func FuzzParseInteraction(f *testing.F) {
	for _, s := range []string{`{"type":"select","options":["a","b"],"default":"b"}`, `{"type":"secret"}`, `{}`, `null`, `{"options":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := hitl.ParseInteraction(data)
		if err != nil {
			return
		}
		if err := r.Check(); err != nil {
			t.Fatalf("accepted %q but the request fails Check: %v", data, err)
		}
		// The dict it turns back into reads the same.
		m := hitl.InteractionMap(r)
		js, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := hitl.ParseInteraction(js)
		if err != nil {
			t.Fatalf("round trip of %s: %v", js, err)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Fatalf("round trip mismatch (-first +second):\n%s", diff)
		}
	})
}

func TestInteractionMap(t *testing.T) {
	got := hitl.InteractionMap(&tool.Request{Kind: tool.KindSecret, Title: "Key", Prompt: "Enter it"})
	want := map[string]any{"type": "secret", "title": "Key", "prompt": "Enter it", "options": []string{}, "default": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	got = hitl.InteractionMap(&tool.Request{Kind: tool.KindText, Multiline: true, Default: ptr("x")})
	if got["multiline"] != true || got["default"] != "x" {
		t.Errorf("got %v", got)
	}
}

func TestReplies(t *testing.T) {
	confirm := []struct {
		resp           tool.Response
		decision, text string
	}{
		{tool.Response{Action: tool.Submit, Value: tool.Allow}, "allow", ""},
		{tool.Response{Action: tool.Submit, Value: "always"}, "always", ""},
		{tool.Response{Action: tool.Submit, Value: tool.Reject, Reason: "r"}, "reject", "r"},
		{tool.Response{Action: tool.Decline, Reason: hitl.ApprovalTimedOut}, "reject", hitl.ApprovalTimedOut},
		{tool.Response{Action: tool.Cancel, Reason: "gone"}, "reject", "gone"},
	}
	for _, c := range confirm {
		if d, r := hitl.ConfirmReply(c.resp); d != c.decision || r != c.text {
			t.Errorf("ConfirmReply(%+v) = %q, %q", c.resp, d, r)
		}
	}
	if s := hitl.InteractionReply(tool.Response{Action: tool.Submit, Value: "v"}); s == nil || *s != "v" {
		t.Errorf("InteractionReply(submit) = %v", s)
	}
	for _, r := range []tool.Response{{Action: tool.Decline}, {Action: tool.Cancel}, {Action: tool.Submit, Value: map[string]any{}}} {
		if s := hitl.InteractionReply(r); s != nil {
			t.Errorf("InteractionReply(%+v) = %q, want nil (None)", r, *s)
		}
	}
}

// The seeds' blocking callbacks as a front end.
func TestCallbacks(t *testing.T) {
	var gotArgs []any
	cb := hitl.Callbacks{
		Confirm: func(source, label string, argv []string) (string, string) {
			gotArgs = []any{source, label, argv}
			if label == "bad" {
				return "reject", "too risky"
			}
			return "always", ""
		},
		Interact: func(req map[string]any) *string {
			if req["type"] == "select" {
				s := req["options"].([]string)[1]
				return &s
			}
			return nil
		},
	}
	b := hitl.New(cb, nil)
	defer b.Close()
	ctx := context.Background()
	r := confirmReq("l", "ok")
	r.Argv = []string{"-rf", "build"}
	if resp := b.Respond(ctx, r); resp.Value != tool.Always {
		t.Errorf("confirm: %+v", resp)
	}
	if diff := cmp.Diff([]any{"rm -rf build/", "ok", []string{"-rf", "build"}}, gotArgs); diff != "" {
		t.Errorf("callback arguments mismatch (-want +got):\n%s", diff)
	}
	if resp := b.Respond(ctx, confirmReq("l", "bad")); resp.Action != tool.Decline || resp.Reason != "too risky" {
		t.Errorf("reject: %+v", resp)
	}
	if resp := b.Respond(ctx, &tool.Request{Kind: tool.KindSelect, Options: []string{"a", "b"}}); resp.Value != "b" {
		t.Errorf("select: %+v", resp)
	}
	if resp := b.Respond(ctx, &tool.Request{Kind: tool.KindText}); resp.Action != tool.Decline {
		t.Errorf("text answered nil: %+v", resp)
	}
	none := hitl.New(hitl.Callbacks{}, nil)
	defer none.Close()
	if resp := none.Respond(ctx, confirmReq("l", "x")); resp.Reason != `Not approved: nobody can approve "x" (the host gave no confirmation callback); approve it with the host's approval policy.` {
		t.Errorf("no confirm callback: %+v", resp)
	}
}

// A blocking callback cannot be interrupted, but the request it answers
// can still be withdrawn.
func TestCallbacksWithdrawn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	called := make(chan struct{})
	b := hitl.New(hitl.Callbacks{Interact: func(map[string]any) *string {
		close(called)
		<-release
		return nil
	}}, nil)
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-called; cancel() }()
	if _, err := b.Ask(ctx, &tool.Request{Kind: tool.KindText}); err == nil {
		t.Error("a withdrawn request should end Ask with the call's error")
	}
}
