// Package hitl is the human in the loop: the broker that every
// confirmation and question of a running tool goes through on its way to
// a person, and back (contract §10).
//
// A tool — Python (its confirm_handler and user_interaction_handler),
// native Go (tool.Confirm, tool.AskSecret...) or MCP (elicitation) — asks
// with a *tool.Request; Broker.Respond, used as tool.CallOptions.Respond,
// resolves it:
//
//   - A confirmation the person answered "always" before, for the same
//     library and script label, is approved by the broker itself; the
//     approvals are listed by Grants and forgotten by Revoke.
//   - The Policy may approve or reject every confirmation without asking
//     (the lcp command's --yes and --approve flags).
//   - Everything else goes to a FrontEnd: the broker's, the one given for
//     the request (RespondVia), as an MCP server does to route a call's
//     questions to the client that made it, or the one the call's context
//     names (WithFrontEnd). Several requests may be pending at once; each
//     is answered exactly once.
//   - A front end that answers later rather than while the call waits (an
//     MCP client of protocol 2026-07-28 answers with its next request)
//     opens the request with Open instead: what the broker can decide it
//     answers at once, and the rest is a Ticket, pending like any request
//     until the front end settles it with Resolve or something else
//     (Answer, an always grant, the limit, Drain, Close) does first.
//   - Nobody answering within the limit (ConfirmLimit, 300 s; QuestionLimit,
//     600 s) rejects the confirmation with "Approval request timed out." or
//     declines the question (an LCP tool gets None). A call cancelled
//     meanwhile withdraws its request from the front end.
//
// Every step is an Event for subscribers (Subscribe), and a pending
// request can be answered by id (Pending, Answer): the event-queue pattern
// of the seeds' GUI handlers, for web pages. A secret's value never
// appears in an event, a log record or an error; events show it masked
// (tool.Mask).
//
// Front ends: package hitl/term is the terminal; an MCP client session
// (package mcp) and the web page (package web, through Answer) are
// others. Unattended answers for a host with nobody to ask (never
// approves, gives defaults, declines secrets); Callbacks adapts the seeds'
// blocking callbacks. ParseInteraction (the one reader of the seeds'
// request dict), ConfirmReply and InteractionReply convert between the
// seeds' dicts and tuples and tool.Request and tool.Response, for the LCP
// binding.
//
// Autonomy levels (strict, safe, full_access) are package autonomy's.
//
// # Wiring a command
//
// lcp call wires it as follows: with a terminal, the terminal front end
// asks (unless --yes or --approve=allow|reject decides confirmations
// first); without one, Unattended answers, so nothing is approved unless a
// flag says so and the rejection reason names the flags.
//
//	approve, err := hitl.ParseApproval(approveFlag) // --approve=ask|allow|reject
//	if err != nil {
//		return err
//	}
//	if yesFlag {
//		approve = hitl.ApproveAllow
//	}
//	var fe hitl.FrontEnd = hitl.Unattended{Hint: "run with --yes or --approve=allow to approve it"}
//	if tty != nil { // stdin and stderr are terminals
//		t := term.New(tty, os.Stderr)
//		defer t.Close()
//		fe = t
//	}
//	broker := hitl.New(fe, &hitl.Options{Policy: hitl.Policy{Approve: approve}})
//	defer broker.Close()
//	res, err := tool.Call(ctx, inventory, name, args, &tool.CallOptions{Respond: broker.Respond})
package hitl
