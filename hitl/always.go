package hitl

import (
	"slices"
	"time"
)

// Grant is an always approval: confirmations of the same library
// (tool.Request.Library) and script label are approved by the broker
// itself for the rest of the session, without asking.
type Grant struct {
	Library string `json:"library"`
	Label   string `json:"label"`
	// Tool is the tool whose confirmation was answered always (empty for
	// a grant made with Remember).
	Tool string    `json:"tool,omitempty"`
	Time time.Time `json:"time"`
}

// Grants lists the always approvals of the session, oldest first.
func (b *Broker) Grants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.grants)
}

// Remember approves confirmations of library and label for the session,
// as if the person had answered always; pending ones are approved at once.
func (b *Broker) Remember(library, label string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grantLocked(library, label, "")
}

// Revoke forgets the always approval of library and label: the next
// confirmation is asked again. It reports whether there was one.
func (b *Broker) Revoke(library, label string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.grants, func(g Grant) bool { return g.Library == library && g.Label == label })
	if i < 0 {
		return false
	}
	g := b.grants[i]
	b.grants = slices.Delete(b.grants, i, i+1)
	b.publishLocked(Event{Type: EventRevoked, Grant: &g})
	return true
}

// RevokeAll forgets every always approval and returns how many there were.
func (b *Broker) RevokeAll() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.grants)
	for _, g := range b.grants {
		b.publishLocked(Event{Type: EventRevoked, Grant: &g})
	}
	b.grants = nil
	return n
}

func (b *Broker) grantedLocked(library, label string) bool {
	return slices.ContainsFunc(b.grants, func(g Grant) bool { return g.Library == library && g.Label == label })
}
