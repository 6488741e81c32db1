//lint:file-ignore SA1019 the client's model is asked through sampling, deprecated from protocol 2026-07-28 on (SEP-2577), and still how clients of both wires lend their model

package mcp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// The host's own requests of a tool call (tool.KindHost): the client's
// model (sampling) and AskClient's requests leave the call's Handler as
// requests of its own, as a question does, and the front end that serves
// the call answers them between the call's steps: the session on the
// 2025-11-25 wire, the round of the call on the 2026-07-28 wire, the task
// for a task. A call's tool needs no declared interaction to make them,
// and the broker never sees them (they are not the person's questions).

// hostAnswer is the Value of the answer to a host request: what the
// client answered, or why there is no answer.
type hostAnswer struct {
	res any
	err error
}

// answerHost resolves the host request r of a call with the call's own
// ways to ask its client: sample for its model, ask for AskClient's
// requests; nil means the call has none.
func answerHost(ctx context.Context, r *tool.Request, sample sampler, ask clientAsker) tool.Response {
	var a hostAnswer
	switch q := r.Host.(type) {
	case *sdk.CreateMessageParams:
		if sample == nil {
			return tool.Nobody{}.Answer(r)
		}
		a.res, a.err = sample(ctx, q)
	case sdk.InputRequestMap:
		if ask == nil {
			return tool.Nobody{}.Answer(r)
		}
		a.res, a.err = ask(ctx, q)
	default:
		return tool.Nobody{}.Answer(r)
	}
	return r.Submitted(a)
}

// askHost puts q (a sampling request, or AskClient's requests) to the
// front end of the call ctx belongs to, as a request of the host's own,
// and returns its answer. Outside a call that can pause for it (ctx
// carries none), direct answers.
func askHost(ctx context.Context, q any, direct func() (any, error)) (any, error) {
	if tool.CallFromContext(ctx) == nil {
		return direct()
	}
	resp, err := tool.Ask(ctx, &tool.Request{Kind: tool.KindHost, Title: "the MCP client", Host: q})
	var undeclared *tool.UndeclaredInteractionError
	if errors.As(err, &undeclared) {
		return direct() // a call run inline by a caller that steps nothing
	}
	if err != nil {
		return nil, err
	}
	if a, ok := resp.Value.(hostAnswer); ok && resp.Action == tool.Submit {
		return a.res, a.err
	}
	if resp.Reason != "" {
		return nil, fmt.Errorf("mcp: the client was not asked: %s", resp.Reason)
	}
	return nil, ErrNoClient
}

// askViaCall is the clientAsker of a call's tool: AskClient's requests,
// put through the call as a host request that ask answers.
func askViaCall(ask clientAsker) clientAsker {
	return func(ctx context.Context, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		got, err := askHost(ctx, reqs, func() (any, error) { return ask(ctx, reqs) })
		if err != nil {
			return nil, err
		}
		res, _ := got.(sdk.InputResponseMap)
		return res, nil
	}
}

// sampleViaCall is the sampling of a call's model: its requests put
// through the call as host requests that sample answers.
func sampleViaCall(sample sampler) sampler {
	return func(ctx context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
		got, err := askHost(ctx, p, func() (any, error) { return sample(ctx, p) })
		if err != nil {
			return nil, err
		}
		res, _ := got.(*sdk.CreateMessageResult)
		if res == nil {
			return nil, errors.New("the MCP client's model gave no answer")
		}
		return res, nil
	}
}
