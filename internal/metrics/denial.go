package metrics

import "encoding/json"

// denialReason reads the reason of a sandbox denial event's data.
func denialReason(data json.RawMessage) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return "", false
	}
	raw, ok := m[SandboxDenialKey]
	if !ok {
		return "", false
	}
	var reason string
	if json.Unmarshal(raw, &reason) != nil || reason == "" {
		reason = "other"
	}
	if len(reason) > 64 {
		reason = reason[:64] // a label, not a message
	}
	return reason, true
}
