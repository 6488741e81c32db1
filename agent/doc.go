// Package agent is the agent loop (contract §15) as a library function: it
// lets a chat model (any OpenAI-compatible endpoint, package llm) use the
// tools of a toolset (an *lcp.Engine, native Go tools, MCP servers) until
// it has an answer.
//
//	eng, _ := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{"./tools"}, DynamicPrompts: true})
//	defer eng.Close()
//	broker := hitl.New(term.New(os.Stdin, os.Stderr), nil) // approvals and questions
//	client := &llm.Client{BaseURL: "http://localhost:8080/v1", APIKey: llm.APIKeyFromEnv(os.Getenv)}
//
//	conv := agent.NewConversation()
//	conv.Append(llm.User("What is in notes.txt?"))
//	res, err := agent.Run(ctx, eng, client, conv, &agent.Options{
//		System:  "You are a helpful assistant.",
//		Respond: broker.Respond,
//		OnEvent: func(e agent.Event) { /* show tool calls */ },
//	})
//	if err != nil {
//		return err
//	}
//	fmt.Println(res.Text)
//
// Each step sends the conversation, the system prompt (Options.System and
// the libraries' tool_<stem>_prompt texts) and the tools' specs; runs the
// model's tool calls in order, with the host's responder answering their
// confirmations and questions; and feeds each result back as a tool
// message: the normalized output (or the error), then the result's
// prompt_injection, which is how an LCP tool guides the model's next
// answer. Arguments the model got wrong come back to it as an error
// message. The loop ends when the model answers without tool calls, after
// Options.MaxSteps requests, or when the context is cancelled; the
// conversation is left consistent in every case, so the next turn can
// follow.
//
// Every call runs in the conversation: a native tool reads it from its
// call (tool.CallFromContext(ctx).Conversation, an *agent.Conversation),
// a Python tool as its discussion_instance.
package agent
