package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestLeafGroupEnv: LCP_CGROUP unset does nothing, "leaf" calls the
// move and turns a refusal into a warning, anything else is a usage
// error naming the setting; doctor's row says which.
func TestLeafGroupEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		refuse      error
		called      bool
		code        int    // ExitCode of the result
		stderr      string // in stderr; "" for none
	}{
		{name: "unset", code: ExitOK},
		{name: "leaf, moved", value: "leaf", called: true, code: ExitOK},
		{name: "leaf, refused", value: "leaf", refuse: errors.New("the group holds 1 other process(es)"), called: true, code: ExitOK,
			stderr: "LCP_CGROUP=leaf: the group holds 1 other process(es); runs' budgets fall back"},
		{name: "nonsense", value: "Leaf", code: ExitUsage, stderr: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			env := &Env{Stderr: &errOut, Getenv: func(k string) string {
				if k == cgroupEnv {
					return tc.value
				}
				return ""
			}}
			called := false
			err := leafGroup(env, func() error { called = true; return tc.refuse })
			if called != tc.called || ExitCode(err) != tc.code {
				t.Fatalf("called %v, err %v (code %d); want called %v, code %d", called, err, ExitCode(err), tc.called, tc.code)
			}
			if tc.code == ExitUsage && !strings.Contains(err.Error(), `LCP_CGROUP="Leaf"`) {
				t.Errorf("error %q does not name the setting", err)
			}
			if got := errOut.String(); (tc.stderr == "") != (got == "") || !strings.Contains(got, tc.stderr) {
				t.Errorf("stderr %q, want %q", got, tc.stderr)
			}
		})
	}
	if row := leafGroupRow(""); !strings.HasPrefix(row, "off (LCP_CGROUP=leaf moves lcp") {
		t.Errorf("doctor row when off: %q", row)
	}
	if row := leafGroupRow("not used: x"); row != "LCP_CGROUP=leaf: not used: x" {
		t.Errorf("doctor row: %q", row)
	}
}
