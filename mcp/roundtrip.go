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
// the rounds (nothing it did is done again): the requestState names the
// waiting call and the round, and is signed with the server's key and
// bound to the caller (its token), the tool and the round, expiring with
// the question's time limit; it is valid in this process only, until the
// call ends. A state that fails any of these is refused with -32602 and
// nothing runs. Each round's request carries the progress and the
// cancellation of the call while it lasts.
//
// The key of an input request is the id of the tool's request (a tool
// may choose it, tool.Request.ID), so that a client may bring the answer
// to a question it knows with the call itself: a question (text, select,
// form) whose key is among the first request's inputResponses is answered
// from there. Confirmations and secrets never are: they are always put to
// the client in a round of their own.

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

	caller string // who may answer (callerOf)
	// preset are the answers the call's first request brought.
	preset sdk.InputResponseMap

	mu      sync.Mutex
	pending *inputAsk // the question the client holds
	samples int       // sampling requests so far, for their keys
	round   int
	busy    bool // a round is being served
	expiry  *time.Timer
}

// inputAsk is what one round of the call asks: an elicitation or a
// sampling request of the client's model, or the several requests of an
// AskClient, all in one input-required result.
type inputAsk struct {
	reqs  sdk.InputRequestMap  // by their keys in inputRequests ("" until the round names it)
	got   sdk.InputResponseMap // the answers so far: a retry may bring some only
	reply chan sdk.InputResponseMap
}

// missing are the requests of the round the client has not answered yet.
func (a *inputAsk) missing() sdk.InputRequestMap {
	out := sdk.InputRequestMap{}
	for k, r := range a.reqs {
		if _, ok := a.got[k]; !ok {
			out[k] = r
		}
	}
	return out
}

func (s *Server) startRoundTrip(ctx context.Context, req *sdk.CallToolRequest, c *serverCall, args json.RawMessage) (*sdk.CallToolResult, error) {
	// The call outlives this request: it may wait for answers that come
	// with later requests.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	rt := &roundTrip{s: s, token: tool.NewID() + tool.NewID(), name: c.name, call: c, cancel: cancel, asks: make(chan *inputAsk), done: make(chan struct{}),
		caller: callerOf(req), preset: req.Params.InputResponses}
	c.frontEnd = func() *clientFrontEnd {
		fe := newClientFrontEnd(s, req.ClientCapabilities(), clientName(req.ClientInfo()))
		fe.elicit = rt.elicit
		return fe
	}
	caps := req.ClientCapabilities()
	c.ask = func(ctx context.Context, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		if err := checkCapabilities(caps, reqs); err != nil {
			return nil, err
		}
		return rt.ask(ctx, &inputAsk{reqs: reqs, reply: make(chan sdk.InputResponseMap, 1)})
	}
	c.sample = rt.sample
	c.model = newClientModel(sampleViaCall(c.sample), req.ClientCapabilities(), clientName(req.ClientInfo()))
	if c.model == nil {
		c.model = &absentModel{c: c}
	}
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
	id := ""
	rt.mu.Lock()
	if r := askOf(ctx); r != nil {
		id = r.ID
		if resp, ok := rt.preset[r.ID]; ok && r.Kind != tool.KindConfirm && r.Kind != tool.KindSecret {
			delete(rt.preset, r.ID)
			rt.mu.Unlock()
			return resp, nil
		}
	} else {
		rt.samples++
		id = fmt.Sprintf("lcp-sampling-%d", rt.samples)
	}
	rt.mu.Unlock()
	got, err := rt.ask(ctx, &inputAsk{reqs: sdk.InputRequestMap{id: p}, reply: make(chan sdk.InputResponseMap, 1)})
	if err != nil {
		return nil, err
	}
	for _, resp := range got { // the one answer, whatever key the round gave it
		return resp, nil
	}
	return nil, errors.New("the client's retry brought no answer")
}

// ask hands a round's requests to the round being served and waits for
// all their answers, which come with the client's next calls.
func (rt *roundTrip) ask(ctx context.Context, a *inputAsk) (sdk.InputResponseMap, error) {
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
		if r, ok := a.reqs[""]; ok {
			delete(a.reqs, "")
			a.reqs[fmt.Sprintf("lcp-%d", rt.round)] = r
		}
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
		return &sdk.CallToolResult{InputRequests: a.reqs, RequestState: rt.state()}, nil
	case <-rt.done:
		rt.s.dropTrip(rt)
		rt.call.progress.detach()
		if err := rt.call.missingCapability(rt.res, rt.err); err != nil {
			return nil, err
		}
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
	st, err := s.openTripState(p.RequestState)
	if err == nil && st.Tool != p.Name {
		err = errors.New("requestState belongs to a call of another tool")
	}
	if err == nil && st.Caller != callerOf(req) {
		err = errors.New("requestState belongs to another caller")
	}
	if err == nil && st.Replica != s.opts.ReplicaID {
		err = fmt.Errorf("the call of this requestState waits on replica %q, which this one (%q) cannot reach (ServerOptions.Replicas)", st.Replica, s.opts.ReplicaID)
	}
	var rt *roundTrip
	if err == nil {
		s.mu.RLock()
		rt = s.trips[st.Trip]
		s.mu.RUnlock()
		if rt == nil {
			err = errors.New("the call of this requestState has ended or expired")
		}
	}
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error() + ": call the tool again"}
	}
	rt.mu.Lock()
	if rt.busy || rt.pending == nil {
		rt.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "this requestState is being served by another request"}
	}
	if st.Round != rt.round {
		rt.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState of an earlier round, whose question was answered already: use the latest one"}
	}
	a := rt.pending
	for k, r := range a.reqs {
		// An answer of another kind than asked is no answer: asked again.
		if resp, ok := normalizeAnswer(r, p.InputResponses[k]); ok {
			if a.got == nil {
				a.got = sdk.InputResponseMap{}
			}
			a.got[k] = resp
		}
	}
	if missing := a.missing(); len(missing) > 0 {
		// Not all answered: ask again what is missing, keeping what came.
		rt.mu.Unlock()
		return &sdk.CallToolResult{InputRequests: missing, RequestState: p.RequestState}, nil
	}
	rt.pending, rt.busy = nil, true
	if rt.expiry != nil {
		rt.expiry.Stop()
	}
	rt.mu.Unlock()
	s.dropTrip(rt)

	rt.call.progress.attach(ctx, req, s.opts.ProgressInterval)
	a.reply <- a.got
	return rt.await(ctx)
}

// tripState is what the requestState of a call kept live carries.
type tripState struct {
	V       int    `json:"v"` // 2 (replayState is 1)
	Trip    string `json:"c"` // the waiting call's key
	Tool    string `json:"t"`
	Round   int    `json:"n"`
	Caller  string `json:"u,omitempty"`
	Replica string `json:"r,omitempty"` // ServerOptions.ReplicaID of the server that holds the call
	Expires int64  `json:"e"`           // unix seconds
}

// state is the requestState of the round being handed to the client.
func (rt *roundTrip) state() string {
	rt.mu.Lock()
	st := tripState{V: 2, Trip: rt.token, Tool: rt.name, Round: rt.round, Caller: rt.caller, Replica: rt.s.opts.ReplicaID,
		Expires: time.Now().Add(rt.s.opts.QuestionTimeout).Unix()}
	rt.mu.Unlock()
	return rt.s.seal(&st)
}

func (s *Server) openTripState(tok string) (*tripState, error) {
	var st tripState
	if err := s.unseal(tok, &st); err != nil {
		return nil, err
	}
	if st.V != 2 || st.Trip == "" {
		return nil, errors.New("malformed requestState")
	}
	if time.Now().Unix() > st.Expires {
		return nil, fmt.Errorf("requestState expired (the question waited more than %s)", s.opts.QuestionTimeout)
	}
	return &st, nil
}

// callerOf names who makes a request, for binding request states to
// it: the user of its OAuth token, else a hash of its Authorization
// header, else nobody in particular ("").
func callerOf(req *sdk.CallToolRequest) string {
	if req == nil || req.Extra == nil {
		return ""
	}
	if ti := req.Extra.TokenInfo; ti != nil && ti.UserID != "" {
		return "u:" + ti.UserID
	}
	if h := req.Extra.Header.Get("Authorization"); h != "" {
		return "h:" + hashOf([]byte(h))
	}
	return ""
}

// askKey carries the tool's request being put to the client, so that
// the round knows its key and kind.
type askKey struct{}

func withAsk(ctx context.Context, r *tool.Request) context.Context {
	return context.WithValue(ctx, askKey{}, r)
}

func askOf(ctx context.Context) *tool.Request {
	r, _ := ctx.Value(askKey{}).(*tool.Request)
	return r
}

func (s *Server) dropTrip(rt *roundTrip) {
	s.mu.Lock()
	if s.trips[rt.token] == rt {
		delete(s.trips, rt.token)
	}
	s.mu.Unlock()
}
