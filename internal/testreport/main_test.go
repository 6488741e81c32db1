package main

import (
	"bytes"
	"strings"
	"testing"
)

const stream = `{"Action":"start","Package":"example.com/a"}
{"Action":"run","Package":"example.com/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"example.com/a","Test":"TestOK"}
{"Action":"run","Package":"example.com/a","Test":"TestPython"}
{"Action":"output","Package":"example.com/a","Test":"TestPython","Output":"=== RUN   TestPython\n"}
{"Action":"output","Package":"example.com/a","Test":"TestPython","Output":"    a_test.go:12: python3 is not installed\n"}
{"Action":"output","Package":"example.com/a","Test":"TestPython","Output":"--- SKIP: TestPython (0.00s)\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestPython"}
{"Action":"output","Package":"example.com/a","Output":"ok  \texample.com/a\t0.01s\n"}
{"Action":"pass","Package":"example.com/a"}
{"Action":"start","Package":"example.com/b"}
{"Action":"output","Package":"example.com/b","Test":"TestNode","Output":"    b_test.go:7: python3 is not installed\n"}
{"Action":"skip","Package":"example.com/b","Test":"TestNode"}
{"Action":"output","Package":"example.com/b","Test":"TestQuiet","Output":"--- SKIP: TestQuiet (0.00s)\n"}
{"Action":"skip","Package":"example.com/b","Test":"TestQuiet"}
{"Action":"output","Package":"example.com/b","Output":"ok  \texample.com/b\t0.02s\n"}
{"Action":"pass","Package":"example.com/b"}
`

func TestReportSkips(t *testing.T) {
	var out bytes.Buffer
	if report(strings.NewReader(stream), &out) {
		t.Fatal("reported a failure")
	}
	want := "ok  \texample.com/a\t0.01s\nok  \texample.com/b\t0.02s\n\n3 test(s) skipped:\n" +
		"  python3 is not installed (2):\n    example.com/a TestPython\n    example.com/b TestNode\n" +
		"  (no reason given) (1):\n    example.com/b TestQuiet\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestReportFailures(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"a failed test shows its output", `{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Test":"TestX","Output":"=== RUN   TestX\n"}
{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:3: got 1, want 2\n"}
{"Action":"output","Package":"p","Test":"TestX","Output":"--- FAIL: TestX (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestX"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
`, "=== RUN   TestX\n    x_test.go:3: got 1, want 2\n--- FAIL: TestX (0.00s)\nFAIL\tp\t0.01s\n\nNo test was skipped.\n"},
		{"a build failure", `{"ImportPath":"p [p.test]","Action":"build-output","Output":"p/x_test.go:3:1: syntax error\n"}
{"ImportPath":"p [p.test]","Action":"build-fail"}
{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}
{"Action":"fail","Package":"p"}
`, "p/x_test.go:3:1: syntax error\nFAIL\tp [build failed]\n\nNo test was skipped.\n"},
		{"a package that never ends", `{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}
`, "testreport: p never finished (the test binary died?)\n\nNo test was skipped.\n"},
		{"lines that are not events", "# p\nvet: x.go:1: bad\n", "# p\nvet: x.go:1: bad\n\nNo test was skipped.\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			failed := report(strings.NewReader(tt.in), &out)
			if out.String() != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", out.String(), tt.want)
			}
			if !failed && tt.name != "lines that are not events" {
				t.Error("no failure reported")
			}
		})
	}
}
