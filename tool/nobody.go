package tool

import (
	"fmt"
	"slices"
)

// Nobody is the one answer of a caller that has no person to put a
// request to: no terminal, no page, an MCP client without elicitation, a
// host without a confirmation or question handler. Every front end that
// finds nobody to ask answers through it, so that the outcome and the
// wording are the same on every path:
//
//   - a confirmation is refused (Decline), never approved, with a reason
//     that names the action, says why nobody could approve it and how to
//     approve it without a person (Hint);
//   - a text or select question gets its own fallback answer
//     (Request.Default; for a select only when it is one of the options),
//     which is what a tool that sets one asked for when nobody answers;
//   - every other question (no default, a secret, a form) is declined with
//     a reason that says why nobody answered.
//
// The reasons go back to the tool and, for a confirmation, to the LLM.
// The host's approval policy (approve everything, hitl.Policy) is not a
// person either, but it is the operator's decision and applies before a
// request reaches any front end.
type Nobody struct {
	// Why says why nobody can answer, as a clause without a final stop:
	// "there is no terminal", "the MCP client \"x\" does not support
	// elicitation". Empty: NoPerson.
	Why string
	// Hint tells the operator how to approve without a person, as a
	// clause: "run with --yes to approve it". Empty: DefaultHint.
	Hint string
}

// NoPerson is Nobody's reason when its caller gives none: a host made
// without a handler for confirmations or questions (CallOptions without
// callbacks, an engine without a Respond).
const NoPerson = "this host has no handler for confirmations and questions"

// DefaultHint is the advice Nobody gives when it refuses an action and its
// caller gave none.
const DefaultHint = "approve it with the host's approval policy"

// Answer resolves r as nobody being there to answer it.
func (n Nobody) Answer(r *Request) Response {
	why := n.Why
	if why == "" {
		why = NoPerson
	}
	switch r.Kind {
	case KindConfirm:
		hint := n.Hint
		if hint == "" {
			hint = DefaultHint
		}
		return r.Declined(fmt.Sprintf("Not approved: nobody can approve %s (%s); %s.", describeAction(r), why, hint))
	case KindText:
		if r.Default != nil {
			return r.Submitted(*r.Default)
		}
	case KindSelect:
		if r.Default != nil && slices.Contains(r.Options, *r.Default) {
			return r.Submitted(*r.Default)
		}
	case KindSecret:
		return r.Declined(fmt.Sprintf("Not answered: nobody can enter the secret (%s).", why))
	case KindHost:
		return r.Declined("Not answered: the call's host has no client to put its request to.")
	}
	return r.Declined(fmt.Sprintf("Not answered: nobody can answer the question (%s).", why))
}

// describeAction names what a confirmation would approve, for reasons.
func describeAction(r *Request) string {
	switch {
	case r.Label != "":
		return fmt.Sprintf("%q", r.Label)
	case r.Tool != "":
		return "the action of " + r.Tool
	}
	return "the action"
}
