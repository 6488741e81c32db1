package lcp

import "time"

// The engines of the tests give a worker's cold start two minutes, the
// hang-detector convention of the tests (see workerStartTimeout).
func init() { workerStartTimeout = 2 * time.Minute }
