package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/web"
)

// callOf returns the call of the server's state with the id.
func (e *env) callOf(id string) web.Call {
	e.t.Helper()
	for _, c := range e.srv.State().Calls {
		if c.ID == id {
			return c
		}
	}
	e.t.Fatalf("no call %s", id)
	return web.Call{}
}

// TestToolsViewForPeople: the tool list says what each tool may ask
// (detected where known, declared otherwise), its title and its hints.
func TestToolsViewForPeople(t *testing.T) {
	detected := &tool.Capabilities{Text: true, MultilineText: true}
	mk := func(info tool.Info) *native.Tool {
		info.InputSchema = emptySchema()
		info.Description = "A tool."
		tl, err := native.Func(info, func(context.Context, map[string]any) (any, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	ts := nativeSet(t,
		mk(tool.Info{Name: "declared", Title: "Declared", Annotations: &tool.Annotations{ReadOnlyHint: yes()}}).Interactive(tool.Capabilities{Confirm: true, Select: true}),
		mk(tool.Info{Name: "detected", DetectedInteractions: detected, Annotations: &tool.Annotations{Title: "From the hints"}}).Interactive(tool.AllInteractions),
		mk(tool.Info{Name: "silent", DetectedInteractions: &tool.Capabilities{}}).Interactive(tool.AllInteractions),
		mk(tool.Info{Name: "plain"}))
	e := newEnv(t, ts, nil)
	var v web.ToolsView
	if err := json.Unmarshal(e.do("GET", "/api/tools", "").body, &v); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tv := range v.Libraries[0].Tools {
		var kinds []string
		for _, k := range tv.MayAsk {
			kinds = append(kinds, string(k))
		}
		ro := tv.Annotations != nil && tv.Annotations.ReadOnlyHint != nil && *tv.Annotations.ReadOnlyHint
		got[tv.Name] = tv.Title + "|" + strings.Join(kinds, ",") + "|" + map[bool]string{true: "read-only"}[ro]
	}
	want := map[string]string{
		"declared": "Declared|confirm,select|read-only",
		"detected": "From the hints|text|",
		"silent":   "||",
		"plain":    "||",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	if raw := string(e.do("GET", "/api/tools", "").body); !strings.Contains(raw, `"may_ask":[]`) {
		t.Errorf("a tool that asks nothing has no empty may_ask: %s", raw)
	}
}

// TestCallKeepsPrinted: what a call printed and logged is kept with it,
// in order and bounded, and is in the state a page reads after a reload.
func TestCallKeepsPrinted(t *testing.T) {
	talk, err := native.Func(tool.Info{Name: "talk", Description: "Talks a lot.", InputSchema: emptySchema()},
		func(ctx context.Context, _ map[string]any) (any, error) {
			c := tool.CallFromContext(ctx)
			c.Emit(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "hello\n"})
			tool.Log(ctx, "error", "it hurts")
			for range 40 {
				c.Emit(tool.Event{Kind: tool.EventOutput, Stream: "stderr", Text: strings.Repeat("x", 1000)})
			}
			return "ok", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nativeSet(t, talk), nil)
	s := e.follow(0)
	id := e.call("talk", `{}`)
	e.waitResult(id)
	c := e.callOf(id)
	if len(c.Printed) < 3 || c.Printed[0] != (web.Printed{Stream: "stdout", Text: "hello\n"}) || c.Printed[1] != (web.Printed{Stream: "log", Text: "error: it hurts\n"}) {
		t.Fatalf("printed: %+v", c.Printed[:min(3, len(c.Printed))])
	}
	kept := 0
	for _, p := range c.Printed {
		kept += len(p.Text)
	}
	if kept > 32<<10 || c.PrintedDropped == 0 || int64(kept)+c.PrintedDropped != int64(len("hello\n")+len("error: it hurts\n")+40*1000) {
		t.Errorf("kept %d bytes, dropped %d", kept, c.PrintedDropped)
	}
	// The log record is an output event of the stream "log".
	ev := s.next("the log record", func(ev web.Event) bool { return ev.Type == web.EventOutput && ev.Output.Stream == "log" })
	if ev.Output.CallID != id || ev.Output.Text != "error: it hurts\n" || ev.Output.Tool != "talk" {
		t.Errorf("log event %+v", ev.Output)
	}
	// The call event at the end carries what was kept.
	done := s.next("call done", func(ev web.Event) bool { return ev.Type == web.EventCall && ev.Call.State == "done" })
	if len(done.Call.Printed) != len(c.Printed) || done.Call.PrintedDropped != c.PrintedDropped {
		t.Errorf("the call event carries %d pieces, %d dropped", len(done.Call.Printed), done.Call.PrintedDropped)
	}
}

// TestProgressEvents: a call's progress is in its state as it runs, and
// in the page's stream at most every 100 ms, the latest value last.
func TestProgressEvents(t *testing.T) {
	release := make(chan struct{})
	busy, err := native.Func(tool.Info{Name: "busy", Description: "Reports progress fast.", InputSchema: emptySchema()},
		func(ctx context.Context, _ map[string]any) (any, error) {
			for i := 1; i <= 500; i++ {
				tool.ReportProgress(ctx, float64(i), 500, "item")
			}
			<-release
			return "ok", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nativeSet(t, busy), nil)
	s := e.follow(0)
	id := e.call("busy", `{}`)
	eventually(t, "the latest progress in the state", func() bool {
		p := e.callOf(id).Progress
		return p != nil && p.Progress == 500 && p.Total == 500 && p.Message == "item"
	})
	// The last progress event carries the latest value.
	var events []web.ProgressEvent
	for {
		ev := s.next("progress", func(ev web.Event) bool { return ev.Type == web.EventProgress })
		events = append(events, *ev.Progress)
		if ev.Progress.Progress == 500 {
			break
		}
	}
	if len(events) > 10 {
		t.Errorf("%d progress events for a burst of 500 reports", len(events))
	}
	if last := events[len(events)-1]; last.CallID != id || last.Tool != "busy" || last.Total != 500 {
		t.Errorf("last progress event %+v", last)
	}
	close(release)
	e.waitResult(id)
	if p := e.callOf(id).Progress; p == nil || p.Progress != 500 {
		t.Errorf("a finished call's progress: %+v", p)
	}
}

// TestRejectedCall: a declined confirmation is recorded on its call, with
// the action and the reason; an allowed one is not.
func TestRejectedCall(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	for _, tt := range []struct {
		answer string
		want   *web.Rejection
	}{
		{`{"action":"decline","reason":"not now"}`, &web.Rejection{Label: "delete", Reason: "not now"}},
		{`{"action":"submit","value":"allow"}`, nil},
	} {
		id := e.call("guarded", `{}`)
		e.answer(e.waitPending(1)[0].Request.ID, tt.answer, http.StatusOK)
		e.waitResult(id)
		if diff := cmp.Diff(tt.want, e.callOf(id).Rejected); diff != "" {
			t.Errorf("%s: rejection mismatch (-want +got):\n%s", tt.answer, diff)
		}
	}
	// Timed out is rejected too.
	short := newEnvWithTimeout(t, 50*time.Millisecond)
	id := short.call("guarded", `{}`)
	short.waitResult(id)
	if r := short.callOf(id).Rejected; r == nil || !strings.Contains(r.Reason, "timed out") {
		t.Errorf("timed out: %+v", r)
	}
}

// newEnvWithTimeout is newEnv with the test tools and a broker whose
// confirmations time out after limit.
func newEnvWithTimeout(t *testing.T, limit time.Duration) *env {
	t.Helper()
	broker := hitl.New(nil, &hitl.Options{ConfirmLimit: limit})
	ts := testTools(t)
	srv := web.NewServer(ts, broker, nil)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
		_ = broker.Close()
		_ = ts.Close()
	})
	return &env{t: t, srv: srv, hs: hs, broker: broker, logs: &logBuffer{}}
}
