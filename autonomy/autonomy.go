// Package autonomy is the operator's autonomy level of seed 000 §5: how
// much a library's tools may do without asking, read from the library's
// host configuration (host_tool_configs[<stem>]["autonomy_level"]).
//
// The tools enforce the level themselves (the built-ins, and Python tools
// that read their config); a host validates the configuration when it
// loads it (ValidateHostConfigs) and hands each call its level
// (tool.CallRequest.Autonomy).
//
//	level := autonomy.FromConfig(cfg) // Safe when unset, Strict when invalid
//	if level.NeedsApproval(risky) {
//		// ask the operator first
//	}
package autonomy

import (
	"errors"
	"fmt"
	"slices"
)

// Level is how much a library's tools may do without asking.
type Level string

// The autonomy levels of seed 000 §5.
const (
	// Strict asks before every execution.
	Strict Level = "strict"
	// Safe runs benign work directly and asks before risky operations
	// (spawning processes, escaping the workspace, the network...). It is
	// the default.
	Safe Level = "safe"
	// FullAccess never asks. It is never assumed: a host must set it.
	FullAccess Level = "full_access"
)

// Key is the key of a library's host configuration that holds its level.
const Key = "autonomy_level"

// ErrUnknown is wrapped by the errors of Parse, Of and ValidateHostConfigs
// for a level that is not strict, safe or full_access.
var ErrUnknown = errors.New("unknown autonomy level")

// Parse returns the level named s; "" is Safe. Anything else than strict,
// safe or full_access is an error wrapping ErrUnknown.
func Parse(s string) (Level, error) {
	switch l := Level(s); l {
	case "":
		return Safe, nil
	case Strict, Safe, FullAccess:
		return l, nil
	}
	return "", fmt.Errorf("%w %q (want strict, safe or full_access)", ErrUnknown, s)
}

// NeedsApproval reports whether a tool at level l must ask the operator
// before an operation; risky says whether the operation is a risky one in
// the sense of Safe. An unknown level asks, as Strict does.
func (l Level) NeedsApproval(risky bool) bool {
	switch l {
	case FullAccess:
		return false
	case Safe:
		return risky
	}
	return true
}

// Of returns the level a library configuration sets: Safe when the key is
// absent or null, an error when it is not one of the three levels (or not
// a string).
func Of(config map[string]any) (Level, error) {
	v, ok := config[Key]
	if !ok || v == nil {
		return Safe, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %v is a %T, not a string", ErrUnknown, v, v)
	}
	return Parse(s)
}

// FromConfig is Of for a call: a value that is not a level — which
// ValidateHostConfigs refuses at configuration time — gives Strict, so
// that a tool never gets more freedom from a mistake.
func FromConfig(config map[string]any) Level {
	l, err := Of(config)
	if err != nil {
		return Strict
	}
	return l
}

// ConfigError reports a bad entry of host_tool_configs.
type ConfigError struct {
	// Library is the key of host_tool_configs (the library stem).
	Library string
	// Key is the offending key of the library's configuration.
	Key string
	Err error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("host_tool_configs[%q].%s: %v", e.Library, e.Key, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

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
		if _, err := Of(configs[stem]); err != nil {
			errs = append(errs, &ConfigError{Library: stem, Key: Key, Err: err})
		}
	}
	return errors.Join(errs...)
}
