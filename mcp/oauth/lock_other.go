//go:build !unix

package oauth

// lockFile is a no-op where flock is not available: the store is still
// written atomically, but concurrent processes may lose an update.
func lockFile(string) (func(), error) { return func() {}, nil }
