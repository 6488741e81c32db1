// Command testreport reads the output of `go test -json` on its standard
// input and writes what `go test` would have printed for people — each
// package's ok/FAIL line, the whole output of failed tests, build errors —
// followed by a summary of the skipped tests with their reasons, so that
// a test that skips for a missing peer (python3, node, chromium...) is
// seen rather than silently counted as a pass. It exits with status 1 when
// a test, a package or a build failed (or the input ends before the
// packages do), 0 otherwise.
//
//	go test -race -json ./... | go run ./internal/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	if failed := report(os.Stdin, os.Stdout); failed {
		os.Exit(1)
	}
}

// event is one line of test2json's output.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail
}

// skip is a skipped test and why.
type skip struct {
	pkg, test, reason string
}

// report copies a go test -json stream to w for people and reports
// whether anything failed.
func report(r io.Reader, w io.Writer) (failed bool) {
	type key struct{ pkg, test string }
	outputs := map[key][]string{}
	var skips []skip
	started := map[string]bool{} // packages seen, until their end
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet's or the linker's words): as is.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "start":
			started[e.Package] = true
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" {
				// The package's own lines: ok, FAIL, coverage, panics
				// (not the PASS go test shows for one package only).
				if e.Output != "PASS\n" {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			outputs[k] = append(outputs[k], e.Output)
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Fprint(w, strings.Join(outputs[k], ""))
			}
			delete(outputs, k)
			if e.Test == "" {
				delete(started, e.Package)
			}
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{e.Package, e.Test, skipReason(outputs[k])})
			}
			delete(outputs, k)
			if e.Test == "" {
				delete(started, e.Package)
			}
		case "pass":
			delete(outputs, k)
			if e.Test == "" {
				delete(started, e.Package)
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testreport: reading the events: %v\n", err)
		failed = true
	}
	for pkg := range started {
		fmt.Fprintf(w, "testreport: %s never finished (the test binary died?)\n", pkg)
		failed = true
	}
	writeSkips(w, skips)
	return failed
}

// skipReason is what a skipped test said (its t.Skip message), without
// the === RUN and --- SKIP lines.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:12: python3 is not installed"
		if i := strings.Index(t, ".go:"); i >= 0 {
			if j := strings.Index(t[i+4:], ": "); j >= 0 {
				t = t[i+4+j+2:]
			}
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// writeSkips lists the skipped tests grouped by reason, the most common
// reason first.
func writeSkips(w io.Writer, skips []skip) {
	if len(skips) == 0 {
		fmt.Fprintln(w, "\nNo test was skipped.")
		return
	}
	byReason := map[string][]skip{}
	for _, s := range skips {
		byReason[s.reason] = append(byReason[s.reason], s)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if a, b := len(byReason[reasons[i]]), len(byReason[reasons[j]]); a != b {
			return a > b
		}
		return reasons[i] < reasons[j]
	})
	fmt.Fprintf(w, "\n%d test(s) skipped:\n", len(skips))
	for _, r := range reasons {
		fmt.Fprintf(w, "  %s (%d):\n", r, len(byReason[r]))
		for _, s := range byReason[r] {
			fmt.Fprintf(w, "    %s %s\n", s.pkg, s.test)
		}
	}
}
