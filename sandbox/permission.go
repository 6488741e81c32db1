package sandbox

// PermissionKind names a permission beyond what a sandboxed run has by
// default.
type PermissionKind string

// The permissions a run may be granted, each by the operator's approval
// (or the library's configuration, for the network).
const (
	// Network keeps the host's network.
	Network PermissionKind = "network"
	// WritePath makes a path outside the workspace writable
	// (Permission.Path).
	WritePath PermissionKind = "write"
	// WriteVCS makes the workspace's version control folders writable in
	// a run that writes the workspace directly.
	WriteVCS PermissionKind = "vcs"
	// Unsandboxed runs outside the sandbox: the host as it is.
	Unsandboxed PermissionKind = "unsandboxed"
)

// Permission is one permission a command appears to need, with the
// reason, written for the operator.
type Permission struct {
	Kind   PermissionKind
	Path   string
	Reason string
}

// Describe says what granting the permissions means, one line each.
func Describe(perms []Permission) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range perms {
		var s string
		switch p.Kind {
		case Network:
			s = "network access"
		case WritePath:
			s = "write access to " + p.Path
		case WriteVCS:
			s = "write access to the workspace's version control folders (.git, ...)"
		case Unsandboxed:
			s = "running outside the sandbox, with full access to this machine"
		default:
			s = string(p.Kind)
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
