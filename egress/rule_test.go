package egress

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in   string
		want string // String() of the rule; "" when the entry is refused
		err  string // part of the error
	}{
		{"api.example.org", "api.example.org", ""},
		{"API.Example.org.", "api.example.org", ""},
		{"api.example.org:443", "api.example.org:443", ""},
		{"*.example.org", "*.example.org", ""},
		{"*.example.org:8443", "*.example.org:8443", ""},
		{"localhost:3000", "localhost:3000", ""},
		{"127.0.0.1", "127.0.0.1", ""},
		{"127.0.0.1:8080", "127.0.0.1:8080", ""},
		{"[::1]:8080", "[::1]:8080", ""},
		{"::1", "::1", ""},
		{"::ffff:127.0.0.1:80", "", "too many"},
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:80", ""},
		{"under_score.example", "under_score.example", ""},
		{"", "", "empty"},
		{"https://api.example.org", "", "not a URL"},
		{"api.example.org/v1", "", "cannot contain"},
		{"user@host", "", "cannot contain"},
		{"*", "", "bare '*'"},
		{"*:443", "", "bare '*'"},
		{"a.*.example.org", "", "first label"},
		{"*example.org", "", "first label"},
		{"host:", "", "empty port"},
		{"host:0", "", "1 to 65535"},
		{"host:65536", "", "1 to 65535"},
		{"host:08", "", "1 to 65535"},
		{"host:http", "", "1 to 65535"},
		{"[::1]", "::1", ""},
		{"[::1]:", "", "empty port"},
		{"[::1", "", "unclosed"},
		{"[1.2.3.4]:80", "", "IPv6"},
		{"-bad.example", "", "starts or ends"},
		{"a..b", "", "empty label"},
		{strings.Repeat("a", 64) + ".org", "", "63 bytes"},
		{"fe80::1%eth0", "", "zone"},
		{"ex ample.org", "", "cannot contain"},
		{"exämple.org", "", "not allowed"},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.in)
		if tt.err != "" {
			var re *RuleError
			if err == nil || !errors.As(err, &re) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRule(%q) = %v, %v; want an error with %q", tt.in, r, err, tt.err)
			}
			continue
		}
		if err != nil || r.String() != tt.want {
			t.Errorf("ParseRule(%q) = %q, %v; want %q", tt.in, r.String(), err, tt.want)
		}
	}
}

func TestRuleMatch(t *testing.T) {
	tests := []struct {
		rule, host string
		port       int
		want       bool
	}{
		{"api.example.org", "api.example.org", 443, true},
		{"api.example.org", "API.EXAMPLE.ORG.", 80, true},
		{"api.example.org", "example.org", 443, false},
		{"api.example.org", "x.api.example.org", 443, false},
		{"api.example.org:443", "api.example.org", 80, false},
		{"*.example.org", "a.example.org", 1, true},
		{"*.example.org", "a.b.example.org", 1, true},
		{"*.example.org", "example.org", 1, false},
		{"*.example.org", "badexample.org", 1, false},
		{"*.example.org:443", "a.example.org", 444, false},
		{"127.0.0.1:8080", "127.0.0.1", 8080, true},
		{"127.0.0.1:8080", "127.0.0.1", 8081, false},
		{"127.0.0.1", "::ffff:127.0.0.1", 9, true},
		{"::1", "[::1]", 9, true},
		{"::1", "0:0:0:0:0:0:0:1", 9, true},
		{"localhost", "127.0.0.1", 80, false},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Match(tt.host, tt.port); got != tt.want {
			t.Errorf("%s matches %s:%d = %v, want %v", tt.rule, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestParseRulesNamesEveryBadEntry(t *testing.T) {
	_, err := ParseRules([]string{"ok.example", "https://bad", "*", "fine:80"})
	if err == nil || !strings.Contains(err.Error(), `"https://bad"`) || !strings.Contains(err.Error(), `"*"`) {
		t.Fatalf("error %v does not name both bad entries", err)
	}
}

// FuzzParseRule checks that any entry either is refused or gives a rule
// that reads back as itself and matches its own host.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"api.example.org", "*.example.org:443", "[::1]:80", "127.0.0.1", "host:", "a.*.b", "::ffff:1.2.3.4", "[fe80::1%25x]:1", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		again, err := ParseRule(r.String())
		if err != nil || again != r {
			t.Fatalf("%q gives %q, which reads back as %+v (%v), not %+v", s, r.String(), again, err, r)
		}
		host := r.Host
		if r.Wildcard {
			host = "x." + host
		}
		port := r.Port
		if port == 0 {
			port = 443
		}
		if !r.Match(host, port) {
			t.Fatalf("%q does not match its own host %s:%d", s, host, port)
		}
	})
}
