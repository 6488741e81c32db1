// Package llm is a client of OpenAI-compatible chat-completions endpoints
// (OpenAI, llama.cpp's server, vLLM, Ollama, LM Studio, LiteLLM...): the
// model side of lcp's agent loop (package agent, lcp chat) and the text
// generation behind a Python tool's lollms_client_instance.generate_text.
//
// A Client sends POST {BaseURL}/chat/completions with the conversation's
// messages (system, user, assistant with tool calls, tool results) and the
// tools' OpenAI function specs, and returns the assistant's message:
//
//	c := &llm.Client{BaseURL: "http://localhost:8080/v1", Model: "qwen2.5-7b-instruct",
//		APIKey: llm.APIKeyFromEnv(os.Getenv)}
//	resp, err := c.Chat(ctx, &llm.ChatRequest{
//		Messages: []llm.Message{llm.System("Be brief."), llm.User("What is 2+3?")},
//		Tools:    specs, // tool.Info.Spec(tool.FormatOpenAI) of each tool
//	})
//	if err != nil {
//		return err
//	}
//	msg := resp.Message() // msg.Content, or msg.ToolCalls to run
//
// Stream does the same with server-sent events and reports the text as it
// arrives; Generate is plain text generation from one prompt, with the
// keyword arguments of lollms' generate_text (ParseGenerateOptions).
//
// Every response is bounded (MaxResponseBytes) and every request timed
// (Timeout). Failures are typed: *HTTPError carries the status and the
// server's own error message, *ResponseError a body that is not a
// chat-completions response. The API key only ever goes into the
// Authorization header: it is never part of an error, and a server that
// echoes it back has it replaced by [redacted].
//
// The --model syntax of the lcp command, BASE_URL#MODEL, is read by
// ParseEndpoint; the key comes from LCP_API_KEY or OPENAI_API_KEY
// (APIKeyFromEnv).
package llm
