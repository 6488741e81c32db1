package hitl_test

import (
	"context"
	"testing"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// BenchmarkRespond measures the broker's own cost per request on its
// three paths: answered from the always memory (no front end), put to a
// front end that answers at once, and resolved through Answer by an event
// subscriber.
func BenchmarkRespond(b *testing.B) {
	ctx := context.Background()
	b.Run("always", func(b *testing.B) {
		br := hitl.New(nil, nil)
		defer br.Close()
		br.Remember("lib", "x")
		r := &tool.Request{Kind: tool.KindConfirm, Library: "lib", Label: "x"}
		for b.Loop() {
			br.Respond(ctx, r)
		}
	})
	b.Run("front_end", func(b *testing.B) {
		br := hitl.New(hitl.Unattended{}, nil)
		defer br.Close()
		r := &tool.Request{Kind: tool.KindText, Default: ptr("v")}
		for b.Loop() {
			br.Respond(ctx, r)
		}
	})
	b.Run("event_answer", func(b *testing.B) {
		br := hitl.New(nil, nil)
		defer br.Close()
		sub := br.Subscribe(64)
		go func() {
			for ev := range sub.Events() {
				if ev.Type == hitl.EventOpened {
					_ = br.Answer(ev.Request.ID, tool.Response{Action: tool.Submit, Value: "v"})
				}
			}
		}()
		r := &tool.Request{Kind: tool.KindText}
		for b.Loop() {
			br.Respond(ctx, r)
		}
	})
}
