package tool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/lcptools/lcp/internal/jsontest"
)

// TestNormalizeConformance runs every case of the shared conformance
// vectors (testdata/normalize/cases.jsonl, copied from
// shared/conformance/normalize).
func TestNormalizeConformance(t *testing.T) {
	data, err := os.ReadFile("testdata/normalize/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c struct {
			Input  json.RawMessage `json:"input"`
			Expect json.RawMessage `json:"expect"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		n++
		res, err := Normalize(c.Input)
		if err != nil {
			t.Errorf("line %d: Normalize(%s): %v", i+1, c.Input, err)
			continue
		}
		got, err := json.Marshal(res)
		if err != nil {
			t.Errorf("line %d: marshal: %v", i+1, err)
			continue
		}
		for _, d := range jsontest.CompareResult(got, c.Expect, jsontest.ResultRules{}) {
			t.Errorf("line %d: input %s: %s\n got  %s", i+1, c.Input, d, got)
		}
	}
	if n < 70 {
		t.Fatalf("only %d cases read", n)
	}
}

func TestNormalizeRules(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		success    bool
		output     string // compact JSON
		errText    string
		payloadKey string // a key that must ride along
	}{
		{"string", `"hi"`, true, `"hi"`, "", ""},
		{"number", `12345678901234567890123`, true, `12345678901234567890123`, "", ""},
		{"list", `[1,{"a":2}]`, true, `[1,{"a":2}]`, "", ""},
		{"null", `null`, true, `null`, "", ""},
		{"success false", `{"success":false}`, false, `{}`, "Tool reported failure", ""},
		{"status error padded", `{"status":"  Error\n"}`, false, `{}`, "Tool reported status '  Error\n'", "status"},
		{"status not a string", `{"status":false}`, true, `{}`, "", "status"},
		{"return_code 0.0", `{"return_code":0.0}`, true, `{}`, "", "return_code"},
		{"return_code -0", `{"return_code":-0}`, true, `{}`, "", "return_code"},
		{"return_code 0e10", `{"return_code":0e10}`, true, `{}`, "", "return_code"},
		{"return_code 1e-400", `{"return_code":1e-400}`, false, `{}`, "Tool failed with return_code 1e-400", "return_code"},
		{"return_code string", `{"return_code":"0"}`, false, `{}`, "Tool failed with return_code 0", "return_code"},
		{"error truthy string", `{"error":"x"}`, false, `{}`, "x", ""},
		{"error NUL string", `{"error":"\u0000"}`, false, `{}`, "\x00", ""},
		{"error empty list", `{"error":[ ]}`, true, `{}`, "", "error"},
		{"error nested", `{"error":{"b":1,"a":[1, 2]}}`, false, `{}`, `{"b":1,"a":[1,2]}`, ""},
		{"error wins over rc", `{"error":"boom","return_code":2}`, false, `{}`, "boom", "return_code"},
		{"rc wins over status", `{"status":"failed","return_code":2}`, false, `{}`, "Tool failed with return_code 2", "status"},
		{"success true masks error", `{"success":true,"error":"w"}`, true, `{}`, "", "error"},
		{"success true does not mask status", `{"success":true,"status":"failed"}`, false, `{}`, "Tool reported status 'failed'", "status"},
		{"output present null", `{"output":null,"data":1}`, true, `null`, "", "data"},
		{"fallback order", `{"text":"t","papers":[1],"content":"c"}`, true, `[1]`, "", "text"},
		{"fallback null value", `{"result":null,"data":1}`, true, `null`, "", "data"},
		{"rest without meta", `{"a":1,"traceback":"t","prompt_injection":"p","status_code":7}`, true, `{"a":1}`, "", "prompt_injection"},
		{"duplicate keys last wins", `{"a":1,"a":2}`, true, `{"a":2}`, "", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Normalize(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if r.Success != tt.success {
				t.Errorf("Success = %v, want %v", r.Success, tt.success)
			}
			wantCode := 200
			if !tt.success {
				wantCode = 500
			}
			if r.StatusCode != wantCode {
				t.Errorf("StatusCode = %d, want %d", r.StatusCode, wantCode)
			}
			var out bytes.Buffer
			if err := json.Compact(&out, r.Output); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.output {
				t.Errorf("Output = %s, want %s", out.String(), tt.output)
			}
			if r.Error != tt.errText {
				t.Errorf("Error = %q, want %q", r.Error, tt.errText)
			}
			if tt.payloadKey != "" {
				if _, ok := r.Payload[tt.payloadKey]; !ok {
					t.Errorf("payload lacks %q: %v", tt.payloadKey, r.Payload)
				}
			}
		})
	}
}

func TestNormalizeRejectsInvalidJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `nul`, `{"a":1}x`, `[1,]`, `{1:2}`} {
		if r, err := Normalize(json.RawMessage(in)); err == nil {
			t.Errorf("Normalize(%q) = %+v, want an error", in, r)
		}
	}
}

func TestResultJSONRoundTrip(t *testing.T) {
	in := `{"success":false,"error":{"k":1},"traceback":"tb","files":["a"],"output":"o"}`
	r, err := Normalize(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"files":["a"],"traceback":"tb","output":"o","success":false,"status_code":500,"error":"{\"k\":1}"}`
	if string(b) != want {
		t.Fatalf("marshal:\n got  %s\n want %s", b, want)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Success || back.StatusCode != 500 || back.Error != `{"k":1}` || back.Traceback() != "tb" || string(back.Output) != `"o"` {
		t.Fatalf("round trip lost data: %+v", back)
	}
	b2, _ := json.Marshal(&back)
	if string(b2) != want {
		t.Fatalf("second marshal:\n got  %s\n want %s", b2, want)
	}
}

func TestResultText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`{"output":{"a": [1, 2]}}`, `{"a":[1,2]}`},
		{`{"success":false,"error":"bad"}`, "bad"},
		{`{"output":"o","prompt_injection":"look"}`, "o"},
	}
	for _, tt := range tests {
		r, err := Normalize(json.RawMessage(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Text(); got != tt.want {
			t.Errorf("Text(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
	r, _ := Normalize(json.RawMessage(`{"output":"o","prompt_injection":"look"}`))
	if r.PromptInjection() != "look" {
		t.Errorf("PromptInjection = %q", r.PromptInjection())
	}
}

func TestPySpace(t *testing.T) {
	for _, r := range []rune{' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1f, 0x85, 0xa0, 0x1680, 0x2000, 0x2028, 0x3000} {
		if !IsPySpace(r) {
			t.Errorf("IsPySpace(%U) = false", r)
		}
	}
	for _, r := range []rune{'a', 0x200b, 0x180e, 0xfeff, 0} {
		if IsPySpace(r) {
			t.Errorf("IsPySpace(%U) = true", r)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	sc := bufio.NewScanner(bytes.NewReader(mustRead(f, "testdata/normalize/cases.jsonl")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct{ Input json.RawMessage }
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			f.Add([]byte(c.Input))
		}
	}
	f.Add([]byte(`{"error":{"a":[1,{"b":null}]},"return_code":-0.0e5}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Normalize(in)
		if err != nil {
			if json.Valid(in) {
				t.Fatalf("valid JSON %q rejected: %v", in, err)
			}
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal of %q: %v", in, err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal of %s: %v", b, err)
		}
		if back.Success != r.Success || back.StatusCode != r.StatusCode || back.Error != r.Error {
			t.Fatalf("round trip of %q changed the result: %+v vs %+v", in, back, r)
		}
		if !r.Success && r.Error == "" {
			t.Fatalf("failure without error text for %q", in)
		}
	})
}

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
