// Package egress is the network of lcp's sandboxes: an HTTP proxy that
// lcp runs outside a box, which lets the box reach the hosts its
// allow-list names and nothing else. The box has a network namespace of
// its own with only a loopback interface and no DNS; its programs find
// the proxy through HTTP_PROXY and HTTPS_PROXY, and the proxy resolves
// names itself.
//
// An allow-list is made of rules (ParseRule): "host", "host:port",
// "*.domain" and "*.domain:port", IP addresses included. The proxy
// serves HTTP CONNECT (tunnels, for HTTPS and anything else a client
// tunnels) and plain HTTP requests in absolute form. A connection no rule
// allows goes to Options.Ask when it is set — a confirmation put to the
// operator — and is refused at once otherwise; every refusal is told to
// Options.OnDeny with the rule that decided it.
//
//	rules, err := egress.ParseRules([]string{"api.example.org", "*.pypi.org:443"})
//	if err != nil { ... }           // the error names the bad entry
//	p := egress.New(&egress.Options{Allow: rules, OnDeny: func(d egress.Denial) { log.Print(d) }})
//	defer p.Close()
//	go p.Serve(listener)           // or p.ServeConn(conn) for each connection of a box
package egress
