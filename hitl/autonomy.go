package hitl

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lcptools/lcp/tool"
)

// Autonomy is how much a library's tools may do without asking: the value
// of host_tool_configs[<stem>]["autonomy_level"]. The tools enforce it
// themselves (the built-ins, and Python tools that read their config); the
// host only validates and passes it on.
type Autonomy string

// The autonomy levels of seed 000 §5.
const (
	// Strict asks before every execution.
	Strict Autonomy = "strict"
	// Safe runs benign work directly and asks before risky operations
	// (spawning processes, escaping the workspace, the network...). It is
	// the default.
	Safe Autonomy = "safe"
	// FullAccess never asks. It is never assumed: a host must set it.
	FullAccess Autonomy = "full_access"
)

// AutonomyKey is the key of a library's host configuration that holds its
// autonomy level.
const AutonomyKey = "autonomy_level"

// ParseAutonomy returns the level named s; "" is Safe. Anything else than
// strict, safe or full_access is an error wrapping ErrUnknownAutonomy.
func ParseAutonomy(s string) (Autonomy, error) {
	switch a := Autonomy(s); a {
	case "":
		return Safe, nil
	case Strict, Safe, FullAccess:
		return a, nil
	}
	return "", fmt.Errorf("%w %q (want strict, safe or full_access)", ErrUnknownAutonomy, s)
}

// NeedsApproval reports whether a tool at level a must ask the operator
// before an operation; risky says whether the operation is a risky one in
// the sense of Safe. An unknown level asks, as Strict does.
func (a Autonomy) NeedsApproval(risky bool) bool {
	switch a {
	case FullAccess:
		return false
	case Safe:
		return risky
	}
	return true
}

// AutonomyOf returns the level a library configuration sets: Safe when the
// key is absent or null, an error when it is not one of the three levels
// (or not a string).
func AutonomyOf(config map[string]any) (Autonomy, error) {
	v, ok := config[AutonomyKey]
	if !ok || v == nil {
		return Safe, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %v is a %T, not a string", ErrUnknownAutonomy, v, v)
	}
	return ParseAutonomy(s)
}

// AutonomyFromContext returns the autonomy level of the call ctx belongs
// to, from its library's host configuration (tool.CallFromContext): Safe
// when none is set. A value that is not a level — which ValidateHostConfigs
// refuses at configuration time — gives Strict: a tool never gets more
// freedom from a mistake.
func AutonomyFromContext(ctx context.Context) Autonomy {
	var cfg map[string]any
	if c := tool.CallFromContext(ctx); c != nil {
		cfg = c.Config
	}
	a, err := AutonomyOf(cfg)
	if err != nil {
		return Strict
	}
	return a
}

// ValidateHostConfigs checks every library's entry of host_tool_configs
// (keyed by library stem) and returns one *ConfigError per bad
// autonomy_level, joined, in the order of the sorted stems; nil when all
// are valid. Hosts call it when they load their configuration, so that a
// typo is an error then rather than a silent default later.
func ValidateHostConfigs(configs map[string]map[string]any) error {
	stems := make([]string, 0, len(configs))
	for stem := range configs {
		stems = append(stems, stem)
	}
	slices.Sort(stems)
	var errs []error
	for _, stem := range stems {
		if _, err := AutonomyOf(configs[stem]); err != nil {
			errs = append(errs, &ConfigError{Library: stem, Key: AutonomyKey, Err: err})
		}
	}
	return errors.Join(errs...)
}
