//go:build !linux

package metrics

// registerProcess adds nothing where /proc is not there: the process's
// metrics are Linux's (as Prometheus' process collector's mostly are).
func (r *registry) registerProcess() {}
