//lint:file-ignore SA1019 AskClient puts the client's sampling and roots requests: deprecated from protocol 2026-07-28 on (SEP-2577), and still part of both wires (sessions on 2025-11-25, inputRequests on 2026-07-28)

package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Asking the MCP client directly (AskClient, ClientRoots).
//
// A tool asks its person through tool.Ask, and lcp's broker decides who
// answers. A host whose Go tool or prompt needs the MCP client itself
// (its roots, or several answers at once) puts its requests to the client
// with AskClient instead, in the client's own terms:
//
//   - On the 2025-11-25 wire the requests go to the client's session one
//     after the other, in the order of their keys (elicitation/create,
//     sampling/createMessage, roots/list).
//   - On the 2026-07-28 wire a tool call kept live returns them all in one
//     input_required result; the client's retry brings the answers, and a
//     retry that answers only some of them gets the others asked again
//     (same requestState) until all are in. A prompt is asked
//     ephemerally: prompts/get returns the requests it lacks answers for
//     (no requestState), and the retry that brings them runs the prompt
//     again, answering from its inputResponses.
//   - A call of a stateless server that replays calls (HTTPOptions.Stateless
//     without replicas) cannot: it gets an error, as the replay would put
//     the requests again at every retry.
//
// The broker does not see these requests: they are the host's, not the
// person's questions.

// clientAskerKey carries the way to ask the client of the request being
// served.
type clientAskerKey struct{}

// clientAsker asks the client of one request for several things at once.
type clientAsker func(ctx context.Context, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error)

func withClientAsker(ctx context.Context, a clientAsker) context.Context {
	return context.WithValue(ctx, clientAskerKey{}, a)
}

// ErrNoClient is returned by AskClient outside a tools/call or
// prompts/get served by lcp's Server.
var ErrNoClient = errors.New("mcp: no MCP client to ask: AskClient works in the tool calls and prompts an lcp Server serves")

// AskClient puts requests to the MCP client of the tools/call or
// prompts/get ctx belongs to and returns its answers by the same keys.
// Each request is an *sdk.ElicitParams, *sdk.CreateMessageParams or
// *sdk.ListRootsParams; its answer is an *sdk.ElicitResult,
// *sdk.CreateMessageResult or *sdk.ListRootsResult. A client that did not
// declare the capability a request needs (elicitation, sampling, roots)
// gets none of them: a *MissingClientCapabilityError. Keys are the
// caller's choice: letters, digits, '_', '-' and '.'.
func AskClient(ctx context.Context, reqs map[string]sdk.InputRequest) (map[string]sdk.InputResponse, error) {
	a, _ := ctx.Value(clientAskerKey{}).(clientAsker)
	if a == nil {
		return nil, ErrNoClient
	}
	if len(reqs) == 0 {
		return map[string]sdk.InputResponse{}, nil
	}
	for k, r := range reqs {
		if err := checkInputKey(k); err != nil {
			return nil, err
		}
		if methodOf(r) == "" {
			return nil, fmt.Errorf("mcp: AskClient: request %q is a %T, not an elicitation, sampling or roots request", k, r)
		}
	}
	return a(ctx, reqs)
}

// ClientRoots asks the MCP client of the call ctx belongs to for its
// roots (roots/list), as AskClient does.
func ClientRoots(ctx context.Context) ([]*sdk.Root, error) {
	got, err := AskClient(ctx, map[string]sdk.InputRequest{"client_roots": &sdk.ListRootsParams{}})
	if err != nil {
		return nil, err
	}
	res, _ := got["client_roots"].(*sdk.ListRootsResult)
	if res == nil {
		return nil, fmt.Errorf("mcp: the client answered roots/list with a %T", got["client_roots"])
	}
	return res.Roots, nil
}

// MissingClientCapabilityError reports requests AskClient could not put
// to the client, which did not declare the capability they need.
type MissingClientCapabilityError struct {
	// Capabilities are the capabilities missing: "elicitation",
	// "sampling", "roots".
	Capabilities []string
}

func (e *MissingClientCapabilityError) Error() string {
	return "mcp: the client did not declare " + strings.Join(e.Capabilities, ", ")
}

// maxInputKey bounds the length of an input request's key.
const maxInputKey = 128

func checkInputKey(k string) error {
	if k == "" || len(k) > maxInputKey {
		return fmt.Errorf("mcp: AskClient: a request key must have 1 to %d characters, not %d", maxInputKey, len(k))
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("mcp: AskClient: request key %q: only letters, digits, '_', '-' and '.'", k)
		}
	}
	return nil
}

// methodOf names the method of an input request, "" for one AskClient
// does not put.
func methodOf(r sdk.InputRequest) string {
	switch r.(type) {
	case *sdk.ElicitParams:
		return "elicitation/create"
	case *sdk.CreateMessageParams:
		return "sampling/createMessage"
	case *sdk.ListRootsParams:
		return "roots/list"
	}
	return ""
}

// checkCapabilities refuses requests the client declared no capability
// for.
func checkCapabilities(caps *sdk.ClientCapabilities, reqs sdk.InputRequestMap) error {
	var missing []string
	for _, r := range reqs {
		var c string
		switch r.(type) {
		case *sdk.ElicitParams:
			if caps == nil || caps.Elicitation == nil {
				c = "elicitation"
			}
		case *sdk.CreateMessageParams:
			if caps == nil || caps.Sampling == nil {
				c = "sampling"
			}
		case *sdk.ListRootsParams:
			if caps == nil || caps.RootsV2 == nil {
				c = "roots"
			}
		}
		if c != "" && !slices.Contains(missing, c) {
			missing = append(missing, c)
		}
	}
	if missing == nil {
		return nil
	}
	slices.Sort(missing)
	return &MissingClientCapabilityError{Capabilities: missing}
}

// sessionAsker asks a 2025-11-25 client through its session, one request
// after the other in the order of their keys.
func sessionAsker(ss *sdk.ServerSession, caps *sdk.ClientCapabilities) clientAsker {
	return func(ctx context.Context, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		if ss == nil {
			return nil, ErrNoClient
		}
		if err := checkCapabilities(caps, reqs); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(reqs))
		for k := range reqs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make(sdk.InputResponseMap, len(reqs))
		for _, k := range keys {
			var (
				res sdk.InputResponse
				err error
			)
			switch r := reqs[k].(type) {
			case *sdk.ElicitParams:
				res, err = ss.Elicit(ctx, r)
			case *sdk.CreateMessageParams:
				res, err = ss.CreateMessage(ctx, r)
			case *sdk.ListRootsParams:
				res, err = ss.ListRoots(ctx, r)
			}
			if err != nil {
				return nil, fmt.Errorf("mcp: asking the client (%s): %w", methodOf(reqs[k]), err)
			}
			out[k] = res
		}
		return out, nil
	}
}

// errAskEphemeral stops a prompt whose requests the retry must answer.
var errAskEphemeral = errors.New("the prompt needs input from the client")

// ephemeralAsker answers a prompt's requests from the inputResponses of
// its request; the requests it has no answer for are kept in *asked, and
// the prompt stops (errAskEphemeral) for prompts/get to return them.
func ephemeralAsker(caps *sdk.ClientCapabilities, given sdk.InputResponseMap, asked *sdk.InputRequestMap) clientAsker {
	return func(ctx context.Context, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		if err := checkCapabilities(caps, reqs); err != nil {
			return nil, err
		}
		out := make(sdk.InputResponseMap, len(reqs))
		for k, r := range reqs {
			resp, ok := normalizeAnswer(r, given[k])
			if !ok {
				if *asked == nil {
					*asked = sdk.InputRequestMap{}
				}
				(*asked)[k] = r
				continue
			}
			out[k] = resp
		}
		if *asked != nil {
			return nil, errAskEphemeral
		}
		return out, nil
	}
}

// normalizeAnswer returns resp as the answer of the kind r asks for, and
// whether it is one: the SDK reads every answer of a model as the form
// that may hold several blocks (CreateMessageWithToolsResult), which is
// given back as a CreateMessageResult with its first text block (else
// its first block).
func normalizeAnswer(r sdk.InputRequest, resp sdk.InputResponse) (sdk.InputResponse, bool) {
	if resp == nil {
		return nil, false
	}
	switch r.(type) {
	case *sdk.ElicitParams:
		_, ok := resp.(*sdk.ElicitResult)
		return resp, ok
	case *sdk.ListRootsParams:
		_, ok := resp.(*sdk.ListRootsResult)
		return resp, ok
	case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
		switch res := resp.(type) {
		case *sdk.CreateMessageResult:
			return res, true
		case *sdk.CreateMessageWithToolsResult:
			out := &sdk.CreateMessageResult{Meta: res.Meta, Model: res.Model, Role: res.Role, StopReason: res.StopReason}
			for _, c := range res.Content {
				if t, ok := c.(*sdk.TextContent); ok {
					out.Content = t
					return out, true
				}
			}
			if len(res.Content) == 0 {
				return nil, false
			}
			out.Content = res.Content[0]
			return out, true
		}
	}
	return nil, false
}
