// Package fulltest marks the slow tests: the README's quick run of the
// suite (go test -race ./...) skips them and says why, and a run with
// LCP_TEST_FULL=1 in the environment, as CI's (.ci/run), runs them too.
//
//	func TestSoak(t *testing.T) {
//		fulltest.Only(t, "30 s of load, then the settling")
//		...
//	}
package fulltest

import (
	"os"
	"testing"
)

// Env is the environment variable that runs the slow tests: any value
// but empty or "0".
const Env = "LCP_TEST_FULL"

// Enabled reports whether the slow tests run.
func Enabled() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Only skips t unless the slow tests run; why says what makes it slow,
// and is the skip's reason.
func Only(t testing.TB, why string) {
	t.Helper()
	if !Enabled() {
		t.Skip(skipMessage(why))
	}
}

func skipMessage(why string) string {
	return "slow (" + why + "): runs with " + Env + "=1, as .ci/run does"
}
