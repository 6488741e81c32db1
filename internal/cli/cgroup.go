package cli

import "fmt"

// cgroupEnv is the variable that asks lcp to move itself into a leaf
// control group, so that cgroup v2 budgets work under systemd delegation.
const cgroupEnv = "LCP_CGROUP"

// leafGroup acts on LCP_CGROUP: unset does nothing; "leaf" calls
// sandbox.UseLeafGroup (a refusal is a warning on stderr, the budget
// falls back as without it); anything else is a usage error. useLeaf is
// sandbox.UseLeafGroup outside tests.
func leafGroup(env *Env, useLeaf func() error) error {
	if env.Getenv == nil {
		return nil
	}
	switch v := env.Getenv(cgroupEnv); v {
	case "":
		return nil
	case "leaf":
		if err := useLeaf(); err != nil && env.Stderr != nil {
			fmt.Fprintf(env.Stderr, "lcp: %s=leaf: %v; runs' budgets fall back as without it (lcp doctor)\n", cgroupEnv, err)
		}
		return nil
	default:
		return usagef("%s=%q: want \"leaf\" (move lcp into a leaf cgroup v2 group) or unset", cgroupEnv, v)
	}
}

// leafGroupRow is lcp doctor's line about LCP_CGROUP: status is what
// sandbox.LeafGroupStatus said ("" when LCP_CGROUP was not "leaf").
func leafGroupRow(status string) string {
	if status == "" {
		return "off (" + cgroupEnv + "=leaf moves lcp into a leaf group lcp/ of its delegated cgroup v2 group, so that runs get v2 budgets under systemd delegation)"
	}
	return cgroupEnv + "=leaf: " + status
}
