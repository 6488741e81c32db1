// Package tool is the core vocabulary of lcp: a Toolset lists tool infos
// and hands out one Handler per invocation; a Handler is a resumable call
// that either completes with a Result or stops on a Request (a confirmation
// or a question for the person at the other end) until the caller responds.
//
// Every backend — native Go functions, LCP Python folders, the built-in
// library, MCP servers, and compositions of these — is a Toolset, and every
// result goes through the same normalizer (Normalize), so a host sees one
// shape whatever produced it.
//
// Tool-authored failures are results (Result.Success is false and the LLM
// reads Result.Error); failures of the engine itself (unknown tool, invalid
// arguments, cancellation, transport trouble...) are typed errors such as
// *UnknownToolError, usable with errors.As. ErrorResult turns either into
// the LCP result object when a host wants one shape for everything.
//
// Simple hosts use the blocking Call with callbacks:
//
//	res, err := tool.Call(ctx, inventory, "tool_greet", json.RawMessage(`{"name":"Ada"}`), &tool.CallOptions{
//		Confirm: func(ctx context.Context, r *tool.Request) (tool.Decision, string) {
//			return tool.Reject, "no approvals in this host"
//		},
//	})
//
// Hosts that answer later than the call asks (an event loop, a protocol
// whose answer comes with the client's next request) step a Run: Start,
// then Answer each Request, until a Step carries the Result. A Run is
// the call's one state machine: Drive is a Run answered in place, so the
// call behaves the same whichever front end answers it.
package tool
