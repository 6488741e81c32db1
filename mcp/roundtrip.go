package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// The multi-round-trip flow of the 2026-07-28 protocol revision (SEP-2322):
// a server cannot send requests to the client; a call that needs input
// returns a result with inputRequests and an opaque requestState, and the
// client calls again with inputResponses and the same state.
//
// lcp's handlers are resumable, so the call keeps running in lcp between
// the rounds: the requestState is an unguessable key of the waiting call,
// valid for this process only, until the call ends or the question's time
// limit passes. Each round's request carries the progress and the
// cancellation of the call while it lasts.

// roundTrip is a call served in rounds.
type roundTrip struct {
	s     *Server
	token string
	name  string
	call  *serverCall

	cancel context.CancelCauseFunc
	asks   chan *inputAsk // from the call's front end
	done   chan struct{}  // closed when the call has ended
	res    *tool.Result
	err    error

	mu      sync.Mutex
	pending *inputAsk // the question the client holds
	round   int
	busy    bool // a round is being served
	expiry  *time.Timer
}

// inputAsk is one input request of the call: an elicitation, or a
// sampling request of the client's model.
type inputAsk struct {
	id     string
	params sdk.InputRequest
	reply  chan sdk.InputResponse
}

func (s *Server) startRoundTrip(ctx context.Context, req *sdk.CallToolRequest, c *serverCall, args json.RawMessage) (*sdk.CallToolResult, error) {
	// The call outlives this request: it may wait for answers that come
	// with later requests.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	rt := &roundTrip{s: s, token: tool.NewID() + tool.NewID(), name: c.name, call: c, cancel: cancel, asks: make(chan *inputAsk), done: make(chan struct{})}
	c.frontEnd = func() *clientFrontEnd {
		fe := newClientFrontEnd(s, req.ClientCapabilities(), clientName(req.ClientInfo()))
		fe.elicit = rt.elicit
		return fe
	}
	c.model = newClientModel(rt.sample, req.ClientCapabilities(), clientName(req.ClientInfo()))
	go func() {
		defer close(rt.done)
		rt.res, rt.err = c.drive(runCtx, args)
		cancel(nil)
	}()
	rt.mu.Lock()
	rt.busy = true
	rt.mu.Unlock()
	return rt.await(ctx)
}

// elicit is the front end's way to ask: it hands the question to the
// round being served and waits for the client's next call.
func (rt *roundTrip) elicit(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	resp, err := rt.input(ctx, p)
	if err != nil {
		return nil, err
	}
	res, _ := resp.(*sdk.ElicitResult)
	if res == nil {
		res = &sdk.ElicitResult{Action: actionDecline}
	}
	return res, nil
}

// input hands an input request to the round being served and waits for
// the client's answer, which comes with its next call.
func (rt *roundTrip) input(ctx context.Context, p sdk.InputRequest) (sdk.InputResponse, error) {
	a := &inputAsk{params: p, reply: make(chan sdk.InputResponse, 1)}
	select {
	case rt.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-a.reply:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// await serves one round: it returns the call's result, or the next
// question as an input-required result.
func (rt *roundTrip) await(ctx context.Context) (*sdk.CallToolResult, error) {
	select {
	case a := <-rt.asks:
		rt.mu.Lock()
		rt.round++
		a.id = fmt.Sprintf("lcp-%d", rt.round)
		rt.pending = a
		rt.busy = false
		limit := rt.s.opts.QuestionTimeout
		rt.expiry = time.AfterFunc(limit, func() {
			rt.s.dropTrip(rt)
			rt.cancel(&tool.CancelledError{Tool: rt.name, Reason: "the client did not answer within " + limit.String()})
		})
		rt.mu.Unlock()
		rt.call.progress.detach()
		rt.s.mu.Lock()
		if rt.s.closed {
			rt.s.mu.Unlock()
			rt.cancel(errors.New("the server is closing"))
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is closing"}
		}
		rt.s.trips[rt.token] = rt
		rt.s.mu.Unlock()
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{a.id: a.params}, RequestState: rt.token}, nil
	case <-rt.done:
		rt.s.dropTrip(rt)
		rt.call.progress.detach()
		return rt.call.toMCP(rt.res, rt.err), nil
	case <-ctx.Done():
		// The client gave up on this round: that ends the call.
		rt.s.dropTrip(rt)
		rt.cancel(&tool.CancelledError{Tool: rt.name, Reason: "cancelled by the client"})
		rt.call.progress.detach()
		<-rt.done
		return nil, ctx.Err()
	}
}

// resume serves a call again with the answers the client brings.
func (s *Server) resume(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	p := req.Params
	s.mu.RLock()
	rt := s.trips[p.RequestState]
	s.mu.RUnlock()
	if rt == nil || rt.name != p.Name {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown or expired requestState: call the tool again"}
	}
	rt.mu.Lock()
	if rt.busy || rt.pending == nil {
		rt.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "this requestState is being served by another request"}
	}
	a := rt.pending
	resp, ok := p.InputResponses[a.id]
	if !ok {
		// Not answered: ask the same question again.
		rt.mu.Unlock()
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{a.id: a.params}, RequestState: rt.token}, nil
	}
	rt.pending, rt.busy = nil, true
	if rt.expiry != nil {
		rt.expiry.Stop()
	}
	rt.mu.Unlock()
	s.dropTrip(rt)

	rt.call.progress.attach(ctx, req, s.opts.ProgressInterval)
	a.reply <- resp
	return rt.await(ctx)
}

func (s *Server) dropTrip(rt *roundTrip) {
	s.mu.Lock()
	if s.trips[rt.token] == rt {
		delete(s.trips, rt.token)
	}
	s.mu.Unlock()
}
