//lint:file-ignore SA1019 the rounds carry the client's model requests (sampling), deprecated from protocol 2026-07-28 on (SEP-2577) and still how clients lend their model

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/hitl"
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

// roundTrip is a call served in rounds: the call's tool.Run, kept
// between the client's requests and stepped by each of them, in the
// request's own goroutine. A round is the request the call's Run waits
// for, put to the client as the result's inputRequests; the retry's
// inputResponses answer it and step the Run to its next request or its
// result. Between the rounds nothing runs for the call in lcp but the
// tool itself, paused in its request.
type roundTrip struct {
	s     *Server
	token string
	name  string
	call  *serverCall
	run   *tool.Run
	fe    *clientFrontEnd
	caps  *sdk.ClientCapabilities

	ctx    context.Context         // the Run's: it outlives the requests
	cancel context.CancelCauseFunc // ends ctx

	caller string // who may answer (callerOf)
	// preset are the answers the call's first request brought.
	preset sdk.InputResponseMap

	mu      sync.Mutex
	pending *inputAsk // the round the client holds
	samples int       // sampling requests so far, for their keys
	round   int
	busy    bool // a request steps the Run
	expiry  *time.Timer
}

// inputAsk is one round: the Run's pending request as the client's input
// requests (an elicitation, a sampling request of the client's model, or
// the several requests of an AskClient), and what came back so far.
type inputAsk struct {
	req  *tool.Request
	reqs sdk.InputRequestMap  // by their keys in inputRequests
	got  sdk.InputResponseMap // the answers so far: a retry may bring some only
	// ticket is a person's request, pending in the call's broker while
	// the client holds it; q is how the front end put it (a secret's
	// page). Both nil for the host's own requests.
	ticket *hitl.Ticket
	q      *question
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

// abandon settles what the round holds when the call ends without its
// answer: the broker's request is withdrawn, a secret's page closed.
func (a *inputAsk) abandon(reason string) {
	if a == nil {
		return
	}
	if a.ticket != nil {
		a.ticket.Withdraw(reason)
	}
	if a.q != nil {
		a.q.close()
	}
}

// errDirectAsk is the answer to a request of the client's that a tool
// makes with a context that is not its call's: on this wire only the
// call's rounds reach the client.
var errDirectAsk = errors.New("the MCP client (protocol 2026-07-28) can only be asked from within the tool call, through the call's context")

func (s *Server) startRoundTrip(ctx context.Context, req *sdk.CallToolRequest, c *serverCall, args json.RawMessage) (*sdk.CallToolResult, error) {
	// The call outlives this request: it may wait for answers that come
	// with later requests.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	caps := req.ClientCapabilities()
	rt := &roundTrip{s: s, token: tool.NewID() + tool.NewID(), name: c.name, call: c, ctx: runCtx, cancel: cancel, caps: caps,
		caller: callerOf(req), preset: req.Params.InputResponses,
		fe: newClientFrontEnd(s, caps, clientName(req.ClientInfo()))}
	// The tool's requests of the client (its model, AskClient) are the
	// Run's host requests, which the rounds put to the client; these
	// direct ways are for a context that carries no call.
	c.ask = func(context.Context, sdk.InputRequestMap) (sdk.InputResponseMap, error) { return nil, errDirectAsk }
	c.sample = func(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
		return nil, errDirectAsk
	}
	c.model = newClientModel(sampleViaCall(c.sample), caps, clientName(req.ClientInfo()))
	if c.model == nil {
		c.model = &absentModel{c: c}
	}
	// This request's end ends the call until the call hands a round
	// to the client (it then waits for the retry, not for this request).
	stop := context.AfterFunc(ctx, func() {
		cancel(&tool.CancelledError{Tool: c.name, Reason: "cancelled by the client"})
	})
	run, step, err := tool.Start(c.withAsker(runCtx), c.h, args, c.options())
	rt.run = run
	rt.mu.Lock()
	rt.busy = true
	rt.mu.Unlock()
	res, rerr := rt.advance(ctx, step, err)
	stop()
	return res, rerr
}

// advance takes the call on from step, in the goroutine of the request
// being served: it answers at once what the broker, the front end or the
// first request's answers can answer, and returns the call's result, or
// the next round as an input-required result. A failed step has ended
// the Run (tool.Run cancels the call).
func (rt *roundTrip) advance(ctx context.Context, step tool.Step, err error) (*sdk.CallToolResult, error) {
	for err == nil && step.Request != nil {
		a, resp, now := rt.prepare(step.Request)
		if !now {
			return rt.hand(a)
		}
		step, err = rt.run.Answer(ctx, resp)
	}
	rt.s.dropTrip(rt)
	rt.cancel(nil)
	rt.call.progress.detach()
	if ctx.Err() != nil && err != nil {
		// The client gave up on this round: that ended the call.
		return nil, ctx.Err()
	}
	var res *tool.Result
	if err == nil {
		res = step.Result
	}
	if merr := rt.call.missingCapability(res, err); merr != nil {
		return nil, merr
	}
	return rt.call.toMCP(res, err), nil
}

// prepare turns the Run's request r into the round that puts it to the
// client, or into its answer when there is one at once: a confirmation
// the broker decides (the always memory, the policy, a drain), a request
// nobody can answer through this client, a question the first request
// answered already (by its key; never a confirmation or a secret), the
// host's requests of capabilities the client did not declare.
func (rt *roundTrip) prepare(r *tool.Request) (*inputAsk, tool.Response, bool) {
	answer := func(resp tool.Response) (*inputAsk, tool.Response, bool) {
		resp.ID = r.ID
		return nil, resp, true
	}
	if r.Kind == tool.KindHost {
		switch q := r.Host.(type) {
		case *sdk.CreateMessageParams:
			rt.mu.Lock()
			rt.samples++
			key := fmt.Sprintf("lcp-sampling-%d", rt.samples)
			rt.mu.Unlock()
			return &inputAsk{req: r, reqs: sdk.InputRequestMap{key: q}}, tool.Response{}, false
		case sdk.InputRequestMap:
			if err := checkCapabilities(rt.caps, q); err != nil {
				return answer(r.Submitted(hostAnswer{err: err}))
			}
			if len(q) == 0 {
				return answer(r.Submitted(hostAnswer{res: sdk.InputResponseMap{}}))
			}
			return &inputAsk{req: r, reqs: maps.Clone(q)}, tool.Response{}, false
		}
		return answer(tool.Nobody{}.Answer(r))
	}
	ctx := rt.ctx
	t, resp, err := rt.s.brokerFor(rt.call.session).Open(ctx, r)
	if t == nil {
		if err != nil && resp.Action == "" {
			resp = r.Declined(err.Error())
		}
		return answer(resp)
	}
	q, err := rt.fe.plan(ctx, t.Request())
	if err != nil {
		return answer(t.Fail(err))
	}
	if q.now != nil {
		return answer(t.Resolve(*q.now))
	}
	key := t.Request().ID
	if r.Kind != tool.KindConfirm && r.Kind != tool.KindSecret {
		rt.mu.Lock()
		given, ok := rt.preset[key]
		delete(rt.preset, key)
		rt.mu.Unlock()
		if ok {
			res, _ := given.(*sdk.ElicitResult)
			if res == nil {
				res = &sdk.ElicitResult{Action: actionDecline}
			}
			return answer(t.Resolve(fromResult(r, res)))
		}
	}
	return &inputAsk{req: r, reqs: sdk.InputRequestMap{key: q.params}, ticket: t, q: q}, tool.Response{}, false
}

// hand gives the round a to the client: the call waits, live, for the
// client's retry, which the requestState names, until the question's
// time limit.
func (rt *roundTrip) hand(a *inputAsk) (*sdk.CallToolResult, error) {
	rt.mu.Lock()
	rt.round++
	rt.pending = a
	rt.busy = false
	limit := rt.s.opts.QuestionTimeout
	rt.expiry = time.AfterFunc(limit, func() {
		rt.end("the client did not answer within " + limit.String())
	})
	rt.mu.Unlock()
	rt.call.progress.detach()
	rt.s.mu.Lock()
	if rt.s.closed {
		rt.s.mu.Unlock()
		rt.end("the server is closing")
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is closing"}
	}
	rt.s.trips[rt.token] = rt
	rt.s.mu.Unlock()
	return &sdk.CallToolResult{InputRequests: maps.Clone(a.reqs), RequestState: rt.state()}, nil
}

// end stops a call that waits for a round the client will not answer
// (its time limit passed, the server closes): the round is abandoned and
// the Run's context cancelled, which ends the tool. Nothing steps the
// Run again.
func (rt *roundTrip) end(reason string) {
	rt.s.dropTrip(rt)
	rt.mu.Lock()
	a := rt.pending
	rt.pending = nil
	if rt.expiry != nil {
		rt.expiry.Stop()
	}
	rt.mu.Unlock()
	a.abandon(reason)
	rt.cancel(&tool.CancelledError{Tool: rt.name, Reason: reason})
}

// answerOf makes the answer to the round's request from the client's
// answers to its input requests (all of them came): the host's request
// gets them as they are, a person's request the answer its ticket settles
// to. A secret's answer waits, within ctx, for the value typed into its
// page; ctx ending first is an error.
func (rt *roundTrip) answerOf(ctx context.Context, a *inputAsk) (tool.Response, error) {
	r := a.req
	if r.Kind == tool.KindHost {
		switch q := r.Host.(type) {
		case *sdk.CreateMessageParams:
			for _, got := range a.got {
				if res, ok := normalizeAnswer(q, got); ok {
					return r.Submitted(hostAnswer{res: res}), nil
				}
			}
			return r.Submitted(hostAnswer{err: errors.New("the client did not answer the sampling request")}), nil
		default:
			return r.Submitted(hostAnswer{res: a.got}), nil
		}
	}
	defer a.q.close()
	if resp, ok := a.ticket.Settled(); ok {
		// Answered meanwhile elsewhere (an always grant, a person on
		// another front end, the limit, a drain): that answer stands.
		resp.ID = r.ID
		return resp, nil
	}
	var res *sdk.ElicitResult
	for _, got := range a.got {
		res, _ = got.(*sdk.ElicitResult)
	}
	if res == nil {
		res = &sdk.ElicitResult{Action: actionDecline}
	}
	resp, err := rt.fe.finish(ctx, a.ticket.Request(), a.q, res)
	if err != nil {
		a.ticket.Withdraw("cancelled by the client")
		return tool.Response{}, err
	}
	resp = a.ticket.Resolve(resp)
	resp.ID = r.ID
	return resp, nil
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
	resp, err := rt.answerOf(ctx, a)
	if err != nil {
		// The client gave up while its answer waited (a secret's page).
		rt.end("cancelled by the client")
		return nil, err
	}
	step, err := rt.run.Answer(ctx, resp)
	return rt.advance(ctx, step, err)
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

func (s *Server) dropTrip(rt *roundTrip) {
	s.mu.Lock()
	if s.trips[rt.token] == rt {
		delete(s.trips, rt.token)
	}
	s.mu.Unlock()
}
