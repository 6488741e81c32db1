package cli

import (
	"context"
	"fmt"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/tool"
	"github.com/spf13/pflag"
)

// The texts that tell the operator how to approve without a person, with
// this command's flags (the libraries name no flag).
const (
	approveHint    = "run with --yes or --approve=allow to approve it"
	rejectedByFlag = "Rejected by the host's approval policy (--approve=reject): no action is approved."
)

// approvalFlags are --yes and --approve, the approval policy of the
// commands that run calls.
type approvalFlags struct {
	yes     bool
	approve string
}

// register adds --approve (its help names who decides when it is "ask")
// and, with withYes, --yes.
func (a *approvalFlags) register(fs *pflag.FlagSet, withYes bool, askWho string) {
	if withYes {
		fs.BoolVarP(&a.yes, "yes", "y", false, "approve every confirmation (same as --approve=allow)")
	}
	help := "approval `policy`: ask, allow or reject"
	if askWho != "" {
		help = fmt.Sprintf("approval `policy`: ask (%s decides), allow or reject", askWho)
	}
	fs.StringVar(&a.approve, "approve", "ask", help)
}

// policy is the broker policy the flags say.
func (a *approvalFlags) policy() (hitl.Policy, error) {
	approval, err := hitl.ParseApproval(a.approve)
	if err != nil {
		return hitl.Policy{}, &usageError{err}
	}
	if a.yes {
		if approval == hitl.ApproveReject {
			return hitl.Policy{}, usagef("--yes contradicts --approve=reject")
		}
		approval = hitl.ApproveAllow
	}
	return hitl.Policy{Approve: approval, RejectReason: rejectedByFlag}, nil
}

// unattended is the front end of a command with nobody to ask: its
// rejections name the flags that approve.
var unattended = hitl.Unattended{Why: hitl.NoTerminal, Hint: approveHint}

// mcpApproveHint tells the operator of lcp mcp how to approve actions the
// client cannot show.
const mcpApproveHint = "approve such actions another way: lcp mcp --yes, or an approval policy"

// mcpUnattended answers for an MCP client that cannot ask its user (no
// elicitation), as the flags say; its rejections name the flag. With
// --yes the broker's policy approves before the client is asked.
func mcpUnattended(p hitl.Policy) func(ctx context.Context, r *tool.Request, client string) tool.Response {
	if p.Approve == hitl.ApproveAllow {
		return mcp.AllowUnattended
	}
	return func(_ context.Context, r *tool.Request, client string) tool.Response {
		return tool.Nobody{Why: mcp.NoElicitation(client), Hint: mcpApproveHint}.Answer(r)
	}
}
