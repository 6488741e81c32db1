// Package web is the web page of lcp (contract §14): one page, served from the
// binary, that lists an inventory's libraries and tools, runs calls with
// forms built from the tools' schemas, shows their normalized results, and
// answers the confirmations and questions of running tools while they
// wait, with a live event log. A call's card keeps what its tool printed
// and logged, shows its progress while it runs, how long it took, and
// whether a confirmation of it was rejected; a tool's card shows its
// title, its hints (read-only, destructive...) and what it may ask.
//
// The page talks to a small JSON API under /api/ and follows a stream of
// server-sent events; confirmations and questions are those of a
// hitl.Broker made without a front end, which the page answers by id.
//
//	broker := hitl.New(nil, nil) // requests wait for the page
//	defer broker.Close()
//	eng, err := lcp.New(ctx, &lcp.Config{Respond: broker.Respond})
//	if err != nil {
//		return err
//	}
//	defer eng.Close()
//	srv := web.NewServer(eng, broker, nil)
//	defer srv.Close()
//	hs := &http.Server{Addr: "127.0.0.1:7777", Handler: srv, ReadHeaderTimeout: 10 * time.Second}
//	return hs.ListenAndServe()
//
// # Security
//
// The server is meant for loopback: CheckAddr refuses another address
// unless remote access is allowed. No local user can act for another: a
// browser signs in by opening an address with a one-time token
// (Server.SignInURL), which the page trades for an HttpOnly,
// SameSite=Strict cookie; the page and the API need that cookie, or the
// server's token (Server.Token) in the X-LCP-Token header (401 without,
// 403 when wrong); a request with neither gets a short sign-in hint. A
// Host header that does not name the loopback interface is refused (DNS
// rebinding), as is a request from another origin (Origin,
// Sec-Fetch-Site). /healthz and /readyz need no sign-in; Drain stops new
// calls and declines pending requests before a stop. Bodies are capped
// (Options.MaxBodyBytes), errors are JSON objects {"error": "..."}, and the
// Content-Security-Policy allows the page's own files only, no inline
// script. A secret answer is never echoed, logged or put in the event
// log: the broker masks it in its events, and the page clears the field as
// soon as it is read.
//
// # API
//
//	GET  /api/tools                   libraries with their tools and schemas, diagnostics
//	GET  /api/state                   pending requests, recent calls, always approvals, latest events, seq
//	GET  /api/events?since=SEQ        server-sent events after SEQ (request, call, output, progress, resync, tools)
//	POST /api/calls                   {"tool", "args", "context"} -> 202 {call}; the result comes as a call event
//	POST /api/calls/{id}/cancel       cancel a running call
//	POST /api/requests/{id}/answer    {"action": "submit"|"decline"|"cancel", "value", "reason"}
//	POST /api/grants/revoke           {"library", "label"} or {"all": true}
package web
