package hitl_test

import (
	"context"
	"testing"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// TestDrainDeclinesPendingAndLaterRequests: a draining host rejects the
// confirmation a person was being asked, with its reason, and every later
// one the policy does not answer; the always memory still answers.
func TestDrainDeclinesPendingAndLaterRequests(t *testing.T) {
	fe := &recorder{shown: make(chan *tool.Request, 1)}
	b := hitl.New(fe, nil)
	defer b.Close()
	b.Remember("lib", "ls")
	got := make(chan tool.Response, 1)
	go func() {
		resp, err := b.Ask(context.Background(), confirmReq("lib", "rm"))
		if err != nil {
			t.Errorf("Ask: %v", err)
		}
		got <- resp
	}()
	<-fe.shown
	const reason = "The server is shutting down."
	if n := b.Drain(reason); n != 1 {
		t.Errorf("Drain declined %d requests, want 1", n)
	}
	select {
	case resp := <-got:
		if resp.Action != tool.Decline || resp.Reason != reason {
			t.Errorf("pending request resolved as %+v", resp)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending request was not declined")
	}
	resp, err := b.Ask(context.Background(), confirmReq("lib", "mv"))
	if err != nil || resp.Action != tool.Decline || resp.Reason != reason {
		t.Errorf("later request: %+v, %v", resp, err)
	}
	resp, err = b.Ask(context.Background(), confirmReq("lib", "ls"))
	if err != nil || resp.Action != tool.Submit || resp.Value != tool.Always {
		t.Errorf("remembered approval while draining: %+v, %v", resp, err)
	}
	if len(b.Pending()) != 0 {
		t.Errorf("pending after Drain: %+v", b.Pending())
	}
}
