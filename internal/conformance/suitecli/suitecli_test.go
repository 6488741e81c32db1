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
