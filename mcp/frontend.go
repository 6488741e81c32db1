package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// clientFrontEnd is the hitl.FrontEnd of one MCP client session: form
// elicitation for confirmations and questions, URL elicitation to a page
// of lcp's for secrets. The server gives each call the front end of the
// session it came from (hitl.Broker.RespondVia), so two sessions never
// see each other's questions. On the 2026-07-28 wire the call's round
// trip uses plan and finish instead of Ask: the client answers with its
// next request, not while the call waits.
type clientFrontEnd struct {
	s      *Server
	client string // the client's name, for messages
	form   bool
	url    bool
	// noSecretPage: the server is stateless, its secret page would live
	// in a process the person's answer may never reach.
	noSecretPage bool
	// elicit sends an elicitation: a request to the client on older
	// protocol revisions, an input request of the call's result on newer.
	elicit func(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error)
	// complete tells the client a URL elicitation is done; may be nil.
	complete func(ctx context.Context, id string)
}

func newClientFrontEnd(s *Server, caps *sdk.ClientCapabilities, client string) *clientFrontEnd {
	fe := &clientFrontEnd{s: s, client: client}
	if caps != nil && caps.Elicitation != nil {
		e := caps.Elicitation
		fe.url = e.URL != nil
		fe.form = e.Form != nil || e.URL == nil // {} means form, for older clients
	}
	return fe
}

// Ask puts r to the person through the client.
func (f *clientFrontEnd) Ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	q, err := f.plan(ctx, r)
	if err != nil {
		return tool.Response{}, err
	}
	if q.now != nil {
		return *q.now, nil
	}
	defer q.close()
	res, err := f.elicit(ctx, q.params)
	if err != nil {
		return tool.Response{}, fmt.Errorf("asking through the MCP client: %w", err)
	}
	return f.finish(ctx, r, q, res)
}

// question is what the front end does with one request: answer it at
// once (now), or put params to the client and make the answer with
// finish from the client's result.
type question struct {
	now    *tool.Response
	params *sdk.ElicitParams
	// page is a secret's page, open until close: the client is asked
	// to open it (URL mode), and the value comes from there.
	page *secretPage
}

func (q *question) close() {
	if q.page != nil {
		q.page.close()
	}
}

// plan decides how r is put to the person without asking yet: the
// wires differ only in how the elicitation reaches the client (a request
// on the session, or an input request of the call's result).
func (f *clientFrontEnd) plan(ctx context.Context, r *tool.Request) (*question, error) {
	if r.Kind == tool.KindSecret {
		return f.planSecret(ctx, r)
	}
	if !f.form {
		// Nobody can be asked through this client: the policy answers,
		// with a reason that says why.
		resp := f.s.opts.Unattended(ctx, r, f.client)
		return &question{now: &resp}, nil
	}
	p, err := toElicit(r)
	if err != nil {
		return nil, err
	}
	return &question{params: p}, nil
}

// finish turns the client's result of q into the answer to r; for a
// secret it waits, within ctx, for the value typed into the page.
func (f *clientFrontEnd) finish(ctx context.Context, r *tool.Request, q *question, res *sdk.ElicitResult) (tool.Response, error) {
	if q.page == nil {
		return fromResult(r, res), nil
	}
	switch res.Action {
	case actionAccept:
	case actionCancel:
		return r.Cancelled("The user dismissed the request for a secret."), nil
	default:
		return r.Declined("The user declined to open the page for the secret."), nil
	}
	id := q.params.ElicitationID
	select {
	case v := <-q.page.value:
		if f.complete != nil {
			f.complete(ctx, id)
		}
		return r.Submitted(v), nil
	case <-q.page.declined:
		if f.complete != nil {
			f.complete(ctx, id)
		}
		return r.Declined("The user declined to give the secret."), nil
	case <-ctx.Done():
		return tool.Response{}, ctx.Err()
	}
}

// planSecret never lets the secret pass through the client: MCP forbids
// secrets in form elicitation. The client is asked (URL mode) to open a
// page lcp serves on loopback for this one request, where the person types
// the secret into a masked field.
func (f *clientFrontEnd) planSecret(ctx context.Context, r *tool.Request) (*question, error) {
	var resp tool.Response
	switch {
	case f.noSecretPage:
		resp = r.Declined("lcp serves this client statelessly (replicas behind a load balancer), so it cannot open its page for a secret: give the value to the tool another way (environment or host configuration).")
	case !f.url && !f.form:
		resp = f.s.opts.Unattended(ctx, r, f.client)
	case !f.url:
		resp = r.Declined(fmt.Sprintf("lcp cannot ask for a secret through the MCP client %s: MCP forbids secrets in form elicitation, and this client does not support URL-mode elicitation, through which lcp would open a page of its own. Give the value to the tool another way (environment or host configuration).", f.client))
	default:
		page, err := f.s.secrets.open(r)
		if err != nil {
			return nil, fmt.Errorf("opening the secret page: %w", err)
		}
		msg := "Open this page to enter the secret lcp asks for"
		if r.Title != "" {
			msg += ": " + r.Title
		}
		msg += ". The value goes to lcp directly, not through this client."
		return &question{page: page, params: &sdk.ElicitParams{Mode: "url", Message: msg, URL: page.url, ElicitationID: tool.NewID()}}, nil
	}
	return &question{now: &resp}, nil
}

// RejectUnattended is the default answer for clients that cannot be
// asked (no elicitation): tool.Nobody's, the answer of every front end
// that finds nobody there. Confirmations are refused, questions declined
// (or given their default), with a reason that says why.
func RejectUnattended(_ context.Context, r *tool.Request, client string) tool.Response {
	return tool.Nobody{Why: NoElicitation(client)}.Answer(r)
}

// NoElicitation is why nobody can answer through an MCP client that does
// not support elicitation (tool.Nobody's Why).
func NoElicitation(client string) string {
	return fmt.Sprintf("the MCP client %s does not support elicitation", client)
}

// AllowUnattended approves every confirmation of a client that cannot be
// asked and answers the rest as RejectUnattended does. It is the host's
// approval policy, not a person's answer (lcp mcp --yes decides through
// its broker's policy instead, before any front end); it is for servers
// without a broker.
func AllowUnattended(ctx context.Context, r *tool.Request, client string) tool.Response {
	if r.Kind == tool.KindConfirm {
		return r.Submitted(tool.Allow)
	}
	return RejectUnattended(ctx, r, client)
}

func clientName(info *sdk.Implementation) string {
	if info == nil || info.Name == "" {
		return "(unnamed client)"
	}
	return fmt.Sprintf("%q", info.Name)
}
