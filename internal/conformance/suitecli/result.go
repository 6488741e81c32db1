package suitecli

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Result is the suite's summary of one scenario's run.
type Result struct {
	Scenario                        string
	Passed, Total, Failed, Warnings int
}

// ParseResult reads the summary line of one scenario's output; false when
// there is none.
func ParseResult(scenario string, out []byte) (Result, bool) {
	m := ResultLine.FindSubmatch(out)
	if m == nil {
		return Result{}, false
	}
	n := func(b []byte) int { v, _ := strconv.Atoi(string(b)); return v }
	return Result{Scenario: scenario, Passed: n(m[1]), Total: n(m[2]), Failed: n(m[3]), Warnings: n(m[4])}, true
}

// Check reads a scenario's run (its combined output and the suite's exit
// error) and fails t on no summary line, a scenario that checked nothing,
// any failed check or warning, or the suite's own failure. It logs the
// summary and returns it.
func Check(t testing.TB, scenario string, out []byte, runErr error) Result {
	t.Helper()
	r, ok := ParseResult(scenario, out)
	if !ok {
		t.Fatalf("no result line (%v):\n%s", runErr, out)
	}
	t.Logf("%s: Passed: %d/%d, %d failed, %d warnings", scenario, r.Passed, r.Total, r.Failed, r.Warnings)
	switch {
	case r.Total == 0:
		t.Errorf("the scenario checked nothing:\n%s", out)
	case r.Failed > 0 || r.Warnings > 0 || r.Passed != r.Total:
		t.Errorf("%d failed, %d warnings:\n%s", r.Failed, r.Warnings, out)
	case runErr != nil:
		t.Errorf("the suite failed (%v):\n%s", runErr, out)
	}
	return r
}

// Summary is a table of results, one scenario a line, its name padded to
// width: "name  passed/total".
func Summary(results []Result, width int) string {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%-*s %2d/%-2d", width, r.Scenario, r.Passed, r.Total)
	}
	return b.String()
}
