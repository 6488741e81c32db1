package hitl

import "fmt"

// Approval is how a broker treats confirmations before any front end sees
// them: the Go form of the lcp command's --approve flag.
type Approval string

// The approval policies.
const (
	// ApproveAsk puts every confirmation to a person (the default).
	ApproveAsk Approval = "ask"
	// ApproveAllow approves every confirmation without asking (--yes).
	ApproveAllow Approval = "allow"
	// ApproveReject rejects every confirmation without asking.
	ApproveReject Approval = "reject"
)

// ParseApproval returns the Approval named s ("" is ApproveAsk).
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(s); a {
	case "":
		return ApproveAsk, nil
	case ApproveAsk, ApproveAllow, ApproveReject:
		return a, nil
	}
	return "", fmt.Errorf("unknown approval policy %q (want ask, allow or reject)", s)
}

// Policy is what a host decides without asking anybody. It applies to
// confirmations only: a question is always put to the front end (which,
// when nobody is there, is Unattended: default or decline), and a secret
// is never answered by a policy.
//
// The lcp command maps its flags onto it: --yes is
// Policy{Approve: ApproveAllow}, --approve=X is Policy{Approve: X}.
type Policy struct {
	// Approve is the approval policy; empty means ApproveAsk.
	Approve Approval
	// RejectReason is the reason given for confirmations ApproveReject
	// rejects (a command line names its flag); PolicyRejected when empty.
	RejectReason string
}

// PolicyRejected is the default reason of a confirmation rejected by
// ApproveReject.
const PolicyRejected = "Rejected by the host's approval policy: no action is approved."
