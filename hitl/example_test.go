package hitl_test

import (
	"context"
	"fmt"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// A host without a terminal: nothing is approved unless a policy says so,
// and the reason says how to approve.
func ExampleUnattended() {
	broker := hitl.New(hitl.Unattended{Hint: "run with --yes to approve it"}, nil)
	defer broker.Close()
	resp := broker.Respond(context.Background(), &tool.Request{Kind: tool.KindConfirm, Label: "deploy:production"})
	fmt.Println(hitl.ConfirmReply(resp))

	yes := hitl.New(hitl.Unattended{}, &hitl.Options{Policy: hitl.Policy{Approve: hitl.ApproveAllow}})
	defer yes.Close()
	fmt.Println(hitl.ConfirmReply(yes.Respond(context.Background(), &tool.Request{Kind: tool.KindConfirm, Label: "deploy:production"})))
	// Output:
	// reject Not approved: nobody can approve "deploy:production" (there is no terminal); run with --yes to approve it.
	// allow
}

// A UI answers requests from the event stream, by id: the Go form of the
// seeds' GUI event queue.
func ExampleBroker_Subscribe() {
	broker := hitl.New(nil, nil) // no front end: answers come through Answer
	defer broker.Close()
	events := broker.Subscribe(16)
	defer events.Close()

	ui := make(chan struct{})
	go func() { // the UI
		defer close(ui)
		for ev := range events.Events() {
			switch ev.Type {
			case hitl.EventOpened:
				fmt.Printf("dialog: %s %q\n", ev.Request.Kind, ev.Request.Prompt)
				_ = broker.Answer(ev.Request.ID, tool.Response{Action: tool.Submit, Value: "canary"})
			case hitl.EventAnswered:
				fmt.Printf("answered by %s\n", ev.By)
				return
			}
		}
	}()

	resp := broker.Respond(context.Background(), &tool.Request{Kind: tool.KindSelect,
		Prompt: "Choose how the service should be rolled out:", Options: []string{"blue-green", "rolling", "canary"}})
	<-ui
	fmt.Println(*hitl.InteractionReply(resp))
	// Output:
	// dialog: select "Choose how the service should be rolled out:"
	// answered by answer
	// canary
}

// "always" is remembered for the same library and label, and revocable.
func ExampleBroker_Grants() {
	asked := 0
	person := hitl.FrontEndFunc(func(ctx context.Context, r *tool.Request) (tool.Response, error) {
		asked++
		return r.Submitted(tool.Always), nil
	})
	broker := hitl.New(person, nil)
	defer broker.Close()
	ask := func() tool.Response {
		return broker.Respond(context.Background(), &tool.Request{Kind: tool.KindConfirm, Library: "system_shell", Label: "git push"})
	}
	ask()
	ask()
	fmt.Println("asked", asked, "grants", len(broker.Grants()))
	broker.Revoke("system_shell", "git push")
	ask()
	fmt.Println("asked", asked)
	// Output:
	// asked 1 grants 1
	// asked 2
}

// An LCP tool's request dict, as the Python side sends it.
func ExampleParseInteraction() {
	r, err := hitl.ParseInteraction([]byte(`{"type": "select", "title": "Region", "options": ["eu-west", "us-east"], "default": "eu-west"}`))
	fmt.Println(r.Kind, r.Options, *r.Default, err)
	_, err = hitl.ParseInteraction([]byte(`{"type": "select", "title": "Region"}`))
	fmt.Println(err)
	// Output:
	// select [eu-west us-east] eu-west <nil>
	// invalid interaction: a "select" request needs a non-empty "options" list
}

// A front end whose person answers with a later request (an MCP client of
// protocol 2026-07-28) opens the request, hands it over, and settles the
// ticket when the answer comes; what the broker can decide alone needs no
// ticket.
func ExampleBroker_Open() {
	broker := hitl.New(nil, nil)
	defer broker.Close()
	broker.Remember("system_shell", "git status")

	_, resp, _ := broker.Open(context.Background(), &tool.Request{Kind: tool.KindConfirm, Library: "system_shell", Label: "git status"})
	fmt.Println("git status:", resp.Value)

	ticket, _, _ := broker.Open(context.Background(), &tool.Request{Kind: tool.KindConfirm, Library: "system_shell", Label: "git push"})
	fmt.Println("pending:", len(broker.Pending()))
	// ... the client's next request brings the person's answer:
	resp = ticket.Resolve(ticket.Request().Submitted(tool.Allow))
	fmt.Println("git push:", resp.Value, "pending:", len(broker.Pending()))
	// Output:
	// git status: always
	// pending: 1
	// git push: allow pending: 0
}
