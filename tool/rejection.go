package tool

// Rejection says that a call failed because the operator declined a
// confirmation it asked for (the person, or the approval policy or the
// unattended front end that answered for them). It is not part of the
// result object the LLM reads, which stays the tool's own failure: front
// ends use it to show a refusal as a refusal, not as a failure of the
// tool.
type Rejection struct {
	// Reason is the feedback that came with the decline, "" when none.
	Reason string
}

// String is how front ends show a rejection to people, one wording for
// the terminal, the web page and MCP clients: "Rejected by the operator:
// <reason>".
func (r *Rejection) String() string {
	if r.Reason == "" {
		return "Rejected by the operator."
	}
	return "Rejected by the operator: " + r.Reason
}

// RejectionOf returns the rejection that ended a call, nil when res is
// not a failure that followed a declined confirmation.
func RejectionOf(res *Result) *Rejection {
	if res == nil || res.Success {
		return nil
	}
	return res.Rejection
}
