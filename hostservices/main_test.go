package hostservices_test

import (
	"os"
	"testing"

	"github.com/lcptools/lcp/sandbox"
)

// TestMain lets the test binary be the sandbox's init: the sandbox
// re-executes it for every sandboxed command the tests run.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
