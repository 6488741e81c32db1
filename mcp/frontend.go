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
// session it came from (hitl.WithFrontEnd), so two sessions never see
// each other's questions.
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
	if r.Kind == tool.KindSecret {
		return f.askSecret(ctx, r)
	}
	if !f.form {
		// Nobody can be asked through this client: the policy answers,
		// with a reason that says why.
		return f.s.opts.Unattended(ctx, r, f.client), nil
	}
	p, err := toElicit(r)
	if err != nil {
		return tool.Response{}, err
	}
	res, err := f.elicit(withAsk(ctx, r), p)
	if err != nil {
		return tool.Response{}, fmt.Errorf("asking through the MCP client: %w", err)
	}
	return fromResult(r, res), nil
}

// askSecret never lets the secret pass through the client: MCP forbids
// secrets in form elicitation. The client is asked (URL mode) to open a
// page lcp serves on loopback for this one request, where the person types
// the secret into a masked field.
func (f *clientFrontEnd) askSecret(ctx context.Context, r *tool.Request) (tool.Response, error) {
	if f.noSecretPage {
		return r.Declined("lcp serves this client statelessly (replicas behind a load balancer), so it cannot open its page for a secret: give the value to the tool another way (environment or host configuration)."), nil
	}
	if !f.url && !f.form {
		return f.s.opts.Unattended(ctx, r, f.client), nil
	}
	if !f.url {
		return r.Declined(fmt.Sprintf("lcp cannot ask for a secret through the MCP client %s: MCP forbids secrets in form elicitation, and this client does not support URL-mode elicitation, through which lcp would open a page of its own. Give the value to the tool another way (environment or host configuration).", f.client)), nil
	}
	page, err := f.s.secrets.open(r)
	if err != nil {
		return tool.Response{}, fmt.Errorf("opening the secret page: %w", err)
	}
	defer page.close()
	id := tool.NewID()
	msg := "Open this page to enter the secret lcp asks for"
	if r.Title != "" {
		msg += ": " + r.Title
	}
	msg += ". The value goes to lcp directly, not through this client."
	res, err := f.elicit(withAsk(ctx, r), &sdk.ElicitParams{Mode: "url", Message: msg, URL: page.url, ElicitationID: id})
	if err != nil {
		return tool.Response{}, fmt.Errorf("asking through the MCP client: %w", err)
	}
	switch res.Action {
	case actionAccept:
	case actionCancel:
		return r.Cancelled("The user dismissed the request for a secret."), nil
	default:
		return r.Declined("The user declined to open the page for the secret."), nil
	}
	select {
	case v := <-page.value:
		if f.complete != nil {
			f.complete(ctx, id)
		}
		return r.Submitted(v), nil
	case <-page.declined:
		if f.complete != nil {
			f.complete(ctx, id)
		}
		return r.Declined("The user declined to give the secret."), nil
	case <-ctx.Done():
		return tool.Response{}, ctx.Err()
	}
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
