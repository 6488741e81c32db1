// Package suitecli finds the official MCP conformance suite's CLI for
// the conformance tests of lcp's client and server, and reads its
// summary lines.
package suitecli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// ResultLine matches the suite's summary of one scenario: checks passed,
// checks made, failures and warnings.
var ResultLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

// Find returns node and the suite's CLI, or skips the test saying what to
// install. It is called from a test of a sibling package of
// internal/conformance/node (client, server), whose working directory is
// its own folder.
func Find(t *testing.T) (node, cli string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the MCP conformance suite cannot run")
	}
	cli, err = filepath.Abs(filepath.Join("..", "node", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cli); err != nil {
		t.Skip("the MCP conformance suite is not installed: run (cd internal/conformance/node && npm ci)")
	}
	return node, cli
}
