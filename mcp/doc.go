// Package mcp connects lcp and the Model Context Protocol, both ways, with
// the official Go SDK.
//
// As a client, NewClientToolset turns MCP servers (stdio commands,
// streamable HTTP or legacy SSE endpoints; see ServerConfig and
// LoadConfig for the configuration shapes, including the "mcpServers"
// file of desktop assistants) into a tool.Toolset whose tools are named
// "<alias>::<tool>". Results go through tool.Normalize like those of any
// tool; a server's elicitations surface as Requests of the call that
// caused them (forms, text and select questions, a confirmation to open
// the link of a URL elicitation); progress notifications are progress
// events of the call (tool.Event); arguments are coerced as contract §7 says
// before they are sent; a stdio server that dies is reported with its
// exit status and started again on the next call. A result's content
// blocks (images, audio, resources) arrive in Result.Content in order, a
// tool's annotations in tool.Info.Annotations, and the servers' prompts
// are the toolset's own (it is a tool.PromptSet).
//
// As a server, NewServer serves any tool.Toolset over stdio (ServeStdio)
// or streamable HTTP (Handler, ListenAndServe): confirmations become form
// elicitations asking allow, always or reject; questions become forms;
// secrets are typed into a one-time page lcp serves on loopback, opened
// through URL-mode elicitation, and never pass through the client. Every
// request goes through a hitl.Broker (its policy, "always" memory and time
// limits) with the session's front end in its context. A call's progress
// events become notifications/progress, its log records
// notifications/message. Content blocks leave as the tool made them;
// ServerOptions.Prompts are served as MCP prompts, with completion of
// their arguments; a client that offers sampling lends its model to the
// calls (tool.Generate); a host adds resources (AddResource). The HTTP
// endpoint binds to loopback by default and checks Host, Origin, an
// optional bearer token and the size of requests; HTTPOptions.PollAfter
// lets clients poll long calls (SSE polling).
//
//	servers, err := mcp.LoadConfig("mcp.json")
//	if err != nil {
//		return err
//	}
//	remote, err := mcp.NewClientToolset(ctx, servers, nil)
//	if err != nil {
//		return err
//	}
//	defer remote.Close()
//	res, err := tool.Call(ctx, remote, "fs::read_file", json.RawMessage(`{"path":"notes.txt"}`), nil)
//
//	// And the other way: serve an inventory to MCP clients over stdio.
//	srv := mcp.NewServer(inventory, &mcp.ServerOptions{Broker: broker}) // a *hitl.Broker, or nil
//	defer srv.Close()
//	err = srv.ServeStdio(ctx)
package mcp
