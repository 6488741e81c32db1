package tool

import (
	"context"
	"testing"
)

// confirmTwice asks two confirmations and fails unless both are allowed;
// with fail set it fails even then.
func confirmTwice(fail bool) RunFunc {
	return func(ctx context.Context, c *CallRequest) (*Result, error) {
		for _, label := range []string{"first", "second"} {
			d, reason, err := Confirm(ctx, "rm x", label, nil)
			if err != nil {
				return nil, err
			}
			if d == Reject && label == "second" {
				return Failure("The operator rejected this action: " + reason), nil
			}
		}
		if fail {
			return Failure("disk full"), nil
		}
		return &Result{Success: true, StatusCode: 200, Output: []byte(`"done"`)}, nil
	}
}

func TestRejectionOf(t *testing.T) {
	info := &Info{Name: "t", Interactions: Capabilities{Confirm: true}}
	answers := func(ds ...Decision) func(context.Context, *Request) (Decision, string) {
		n := 0
		return func(context.Context, *Request) (Decision, string) {
			d := ds[n]
			n++
			return d, "not today"
		}
	}
	for _, tt := range []struct {
		name string
		fail bool
		ds   []Decision
		want *Rejection
	}{
		{"the last confirmation declined", false, []Decision{Allow, Reject}, &Rejection{Reason: "not today"}},
		{"allowed, then a failure", true, []Decision{Allow, Allow}, nil},
		{"declined, then allowed, then a failure", true, []Decision{Reject, Allow}, nil},
		{"success", false, []Decision{Allow, Always}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Drive(context.Background(), NewHandler(info, confirmTwice(tt.fail), nil), nil, &CallOptions{Confirm: answers(tt.ds...)})
			if err != nil {
				t.Fatal(err)
			}
			got := RejectionOf(res)
			switch {
			case (got == nil) != (tt.want == nil):
				t.Fatalf("RejectionOf = %v, want %v (result %+v)", got, tt.want, res)
			case got != nil && *got != *tt.want:
				t.Errorf("RejectionOf = %+v, want %+v", got, tt.want)
			}
			if b, _ := res.MarshalJSON(); got != nil && string(b) != `{"output":"The operator rejected this action: not today","success":false,"status_code":500,"error":"The operator rejected this action: not today"}` {
				t.Errorf("the result object changed: %s", b)
			}
		})
	}
	if s := (&Rejection{Reason: "too risky"}).String(); s != "Rejected by the operator: too risky" {
		t.Errorf("String() = %q", s)
	}
	if s := (&Rejection{}).String(); s != "Rejected by the operator." {
		t.Errorf("String() = %q", s)
	}
	if RejectionOf(nil) != nil {
		t.Error("RejectionOf(nil) is not nil")
	}
}
