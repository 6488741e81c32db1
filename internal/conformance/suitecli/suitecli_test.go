package suitecli

import (
	"slices"
	"testing"
)

func TestParseRequired(t *testing.T) {
	listing := `Required for 2025-11-25 (48 scenarios, frozen; run at the 2025-11-25 wire):

Server scenarios (test against a server):
  - server-initialize
  - ping

Client scenarios (test against a client):
  - initialize
  - auth/metadata-default

Run and reported, but never scored:
  extension (6):
    - auth/dpop [client]
`
	tests := []struct {
		side string
		want []string
	}{
		{"server", []string{"server-initialize", "ping"}},
		{"client", []string{"initialize", "auth/metadata-default"}},
	}
	for _, tt := range tests {
		got, err := parseRequired(listing, tt.side)
		if err != nil {
			t.Fatalf("%s: %v", tt.side, err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.side, got, tt.want)
		}
	}
	if _, err := parseRequired("nothing here", "server"); err == nil {
		t.Error("a listing without the section parsed")
	}
}

func TestParseResult(t *testing.T) {
	for _, tt := range []struct {
		out  string
		want Result
		ok   bool
	}{
		{"...\nPassed: 3/4, 1 failed, 0 warnings\n", Result{Scenario: "s", Passed: 3, Total: 4, Failed: 1}, true},
		{"Passed: 0/0, 0 failed, 2 warnings", Result{Scenario: "s", Warnings: 2}, true},
		{"crashed before the summary", Result{}, false},
	} {
		got, ok := ParseResult("s", []byte(tt.out))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: %+v, %v; want %+v, %v", tt.out, got, ok, tt.want, tt.ok)
		}
	}
	s := Summary([]Result{{Scenario: "initialize", Passed: 2, Total: 2}, {Scenario: "tools-call", Passed: 9, Total: 10}}, 12)
	if want := "initialize    2/2 \ntools-call    9/10"; s != want {
		t.Errorf("Summary:\n%q\nwant\n%q", s, want)
	}
}
