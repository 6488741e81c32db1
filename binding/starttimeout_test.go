package binding

import "time"

// The bindings of the tests give a worker's cold start two minutes, the
// hang-detector convention of the tests (see startTimeout).
func init() { startTimeout = 2 * time.Minute }
