package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stateless replicas and the questions of a call (HTTPOptions.Stateless,
// clients of the 2026-07-28 revision).
//
// A stateless server keeps nothing between requests, so that any replica
// may serve the next one. A call that asks a question cannot wait for
// the answer in the process that asked: the call is stopped, and its
// input-required result carries, in requestState, the answers the call
// got so far (signed with a key every replica shares). When the client
// calls again with the answer, whichever replica gets it runs the call
// again from its start, answers its questions from the state, in order,
// and goes on past the new answer; the call's next question repeats the
// round. What a tool did before a question is therefore done again:
// lcp's built-in tools ask before they act, and a tool of one's own must
// do likewise to be served this way (or be served by a stateful server).
// A replay that asks a different question than the state recorded (the
// tool's questions depend on something that changed) ends with an error
// that says so. "Always" is taken as "allow": there is no session to
// remember it in. Secrets cannot be asked (the page lcp opens for them
// lives in one process).

// replayState is what requestState carries.
type replayState struct {
	V       int            `json:"v"`
	Tool    string         `json:"t"`
	Args    string         `json:"a"`           // hash of the arguments
	Issued  int64          `json:"i"`           // unix seconds
	Caller  string         `json:"u,omitempty"` // callerOf the request
	Answers []replayAnswer `json:"r,omitempty"`
}

type replayAnswer struct {
	Ask    string          `json:"q"` // hash of the question
	Result json.RawMessage `json:"r"` // the client's ElicitResult
}

// errNeedInput stops a replayed call at a question it has no answer for.
var errNeedInput = errors.New("the call needs input from the client")

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// argsHash hashes the arguments as a client sends them again: the SDKs
// re-encode them, so the hash is of their canonical encoding.
func argsHash(args json.RawMessage) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	return hashOf(args)
}

// stateKey returns the key that signs request states.
func (s *Server) stateKey() []byte {
	s.keyOnce.Do(func() {
		if len(s.opts.StateKey) > 0 {
			s.key = s.opts.StateKey
			return
		}
		s.key = make([]byte, 32)
		_, _ = rand.Read(s.key)
	})
	return s.key
}

// seal encodes v and signs it (HMAC-SHA256 with the state key).
func (s *Server) seal(v any) string {
	payload, _ := json.Marshal(v)
	mac := hmac.New(sha256.New, s.stateKey())
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// unseal checks the signature of a sealed token and decodes it into v.
func (s *Server) unseal(tok string, v any) error {
	p, sig, ok := strings.Cut(tok, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || len(tok) > maxStateLen {
		return errors.New("malformed requestState")
	}
	mac := hmac.New(sha256.New, s.stateKey())
	mac.Write(payload)
	if !hmac.Equal(mac.Sum(nil), got) {
		return errors.New("requestState was not made by this server or its replicas, or was altered (replicas must share the same token or state key)")
	}
	if json.Unmarshal(payload, v) != nil {
		return errors.New("malformed requestState")
	}
	return nil
}

// maxStateLen bounds the requestState a server decodes.
const maxStateLen = 1 << 20

func (s *Server) encodeState(st *replayState) string { return s.seal(st) }

func (s *Server) decodeState(tok string) (*replayState, error) {
	var st replayState
	if err := s.unseal(tok, &st); err != nil {
		return nil, err
	}
	if st.V != 1 {
		return nil, errors.New("malformed requestState")
	}
	if age := time.Since(time.Unix(st.Issued, 0)); age > s.opts.QuestionTimeout {
		return nil, fmt.Errorf("requestState expired (the question waited more than %s)", s.opts.QuestionTimeout)
	}
	return &st, nil
}

// replayCall serves a call of a stateless server: run it, answering its
// questions from the request state and the answer this request brings;
// at a question without an answer, stop and return it.
func (s *Server) replayCall(ctx context.Context, req *sdk.CallToolRequest, c *serverCall) (*sdk.CallToolResult, error) {
	p := req.Params
	st := &replayState{V: 1, Tool: p.Name, Args: argsHash(p.Arguments), Caller: callerOf(req)}
	if p.RequestState != "" {
		old, err := s.decodeState(p.RequestState)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error() + ": call the tool again"}
		}
		if old.Tool != st.Tool || old.Args != st.Args {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState belongs to another call (tool or arguments differ): call the tool again"}
		}
		if old.Caller != st.Caller {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState belongs to another caller: call the tool again"}
		}
		st = old
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next  int               // the index of the call's next question
		asked *sdk.ElicitParams // the question the client must answer
	)
	c.frontEnd = func() *clientFrontEnd {
		fe := newClientFrontEnd(s, req.ClientCapabilities(), clientName(req.ClientInfo()))
		fe.url = false
		fe.noSecretPage = true
		fe.elicit = func(fctx context.Context, q *sdk.ElicitParams) (*sdk.ElicitResult, error) {
			raw, _ := json.Marshal(q)
			fp := hashOf(raw)
			i := next
			next++
			id := fmt.Sprintf("lcp-%d", i+1)
			if i < len(st.Answers) {
				if st.Answers[i].Ask != fp {
					return nil, fmt.Errorf("run again for the client's answer, the call asked another question than before (question %d); call the tool again", i+1)
				}
				var res sdk.ElicitResult
				if err := json.Unmarshal(st.Answers[i].Result, &res); err != nil {
					return nil, fmt.Errorf("answer %d in requestState: %w", i+1, err)
				}
				return &res, nil
			}
			if resp, ok := p.InputResponses[id]; ok && i == len(st.Answers) {
				res, _ := resp.(*sdk.ElicitResult)
				if res == nil {
					res = &sdk.ElicitResult{Action: actionDecline}
				}
				res = alwaysAsAllow(res)
				b, _ := json.Marshal(res)
				st.Answers = append(st.Answers, replayAnswer{Ask: fp, Result: b})
				return res, nil
			}
			// A new question: this run ends here; the next request
			// brings the answer.
			asked = q
			cancel(errNeedInput)
			<-fctx.Done()
			return nil, context.Cause(fctx)
		}
		return fe
	}
	if !offersSampling(req.ClientCapabilities()) {
		c.model = &absentModel{c: c}
	}
	c.ask = func(context.Context, sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		return nil, errors.New("mcp: AskClient needs the call kept live between the client's retries; a stateless server without replicas replays calls instead (ServerOptions.Replicas)")
	}
	res, err := c.drive(runCtx, p.Arguments)
	c.progress.detach()
	if asked == nil {
		if err := c.missingCapability(res, err); err != nil {
			return nil, err
		}
	}
	if asked != nil {
		st.Issued = time.Now().Unix()
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{fmt.Sprintf("lcp-%d", next): asked}, RequestState: s.encodeState(st)}, nil
	}
	return c.toMCP(res, err), nil
}

// alwaysAsAllow turns an "always" decision into "allow": a stateless
// server has no session to remember it in.
func alwaysAsAllow(res *sdk.ElicitResult) *sdk.ElicitResult {
	if res.Action != actionAccept || res.Content == nil {
		return res
	}
	if d, ok := res.Content["decision"].(string); ok && d == "always" {
		c := *res
		c.Content = map[string]any{}
		for k, v := range res.Content {
			c.Content[k] = v
		}
		c.Content["decision"] = "allow"
		return &c
	}
	return res
}
