package egress

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/lcptools/lcp/tool"
)

// ConfirmLabel is the label of the confirmation that asks for a host:
// the hitl broker remembers "always" per library and label, so per
// library and host.
func ConfirmLabel(host string, port int) string {
	return "Network access to " + net.JoinHostPort(host, strconv.Itoa(port))
}

// Confirmer puts the connections no rule allows to the person as a
// confirmation of the call that makes them — "<who> wants to reach
// host:port: allow once, always, reject" — through tool.Confirm, so
// through the same broker and front ends as every other confirmation.
// What it allowed once is allowed again for its life: make one per run,
// or per call. The zero value is ready to use.
type Confirmer struct {
	mu      sync.Mutex // one question at a time
	allowed map[string]bool
}

// Ask asks under ctx, the context of the call (it carries the
// tool.CallRequest), on behalf of who (a tool, a server).
func (c *Confirmer) Ask(ctx context.Context, who, host string, port int) bool {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.allowed[target] {
		return true
	}
	src := fmt.Sprintf("%s wants to reach %s, which the network list of its sandbox does not name.\n"+
		"Allow once lets it connect for this run; always, whenever this library asks for it again in this session.", who, target)
	d, _, err := tool.Confirm(ctx, src, ConfirmLabel(host, port), nil)
	if err != nil || (d != tool.Allow && d != tool.Always) {
		return false
	}
	if c.allowed == nil {
		c.allowed = map[string]bool{}
	}
	c.allowed[target] = true
	return true
}

// Event is the log event that shows the denial in a call's events.
func (d Denial) Event() tool.Event {
	return tool.Event{Kind: tool.EventLog, Level: "warning", Text: "the sandbox denied " + d.String(), Data: d.EventData()}
}
