package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/conformance/suitecli"
)

// scenarios are the server scenarios of the pinned suite (0.1.13), all of
// them: its active ones and its two pending ones (json-schema-2020-12 and
// server-sse-polling).
var scenarios = []string{
	"server-initialize",
	"logging-set-level",
	"ping",
	"completion-complete",
	"tools-list",
	"tools-call-simple-text",
	"tools-call-image",
	"tools-call-audio",
	"tools-call-embedded-resource",
	"tools-call-mixed-content",
	"tools-call-with-logging",
	"tools-call-error",
	"tools-call-with-progress",
	"tools-call-sampling",
	"tools-call-elicitation",
	"json-schema-2020-12",
	"elicitation-sep1034-defaults",
	"server-sse-polling",
	"server-sse-multiple-streams",
	"elicitation-sep1330-enums",
	"resources-list",
	"resources-read-text",
	"resources-read-binary",
	"resources-templates-read",
	"resources-subscribe",
	"resources-unsubscribe",
	"prompts-list",
	"prompts-get-simple",
	"prompts-get-with-args",
	"prompts-get-embedded-resource",
	"prompts-get-with-image",
	"dns-rebinding-protection",
}

// startFixture builds and starts the fixture on a free loopback port and
// returns its URL.
func startFixture(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lcp-conformance-server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the fixture: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if s := stderr.String(); s != "" {
			t.Logf("fixture stderr:\n%s", s)
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			urls <- strings.TrimSpace(sc.Text())
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok || !strings.HasPrefix(u, "http://") {
			t.Fatalf("the fixture did not start (%q); stderr:\n%s", u, stderr.String())
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("the fixture did not print its URL; stderr:\n%s", stderr.String())
	}
	return ""
}

// TestSuiteScenarios runs every server scenario of the official MCP
// conformance suite against the fixture, through the suite's own CLI,
// and fails on any failed check, any warning, and a scenario that checked
// nothing. It also fails when the suite lists a server scenario lcp does
// not run.
func TestSuiteScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes about a minute")
	}
	node, cli := suitecli.Find(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the fixture's Python library cannot run")
	}

	required, err := suitecli.Required(node, cli, "server", suitecli.Revision)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range required {
		if !slices.Contains(scenarios, name) {
			t.Errorf("the suite requires a server scenario of %s lcp does not run: %s", suitecli.Revision, name)
		}
	}

	url := startFixture(t)
	var summary []suitecli.Result
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, append([]string{cli, "server", "--url", url, "--scenario", sc}, suitecli.VersionArgs(required, sc)...)...)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			summary = append(summary, suitecli.Check(t, sc, out, err))
		})
	}
	t.Logf("MCP conformance suite 0.2.0-alpha.12 at %s, server scenarios (passed/total checks):\n%s", suitecli.Revision, suitecli.Summary(summary, 32))
}

// summaryLine matches a scenario of the suite's summary of a requirements
// run: "✓ name: 2 passed, 0 failed".
var summaryLine = regexp.MustCompile(`(?m)^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed`)

// TestSuiteRequirements runs the server scenarios a spec revision
// requires, as the suite scores them (`server --requirements REV`):
// 2026-07-28, or the revision LCP_CONFORMANCE_REVISION names. It fails on
// any scored scenario that fails, and when the suite scores fewer
// scenarios than it lists for the revision.
func TestSuiteRequirements(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes about a minute")
	}
	rev := os.Getenv("LCP_CONFORMANCE_REVISION")
	if rev == "" {
		rev = "2026-07-28"
	}
	node, cli := suitecli.Find(t)
	required, err := suitecli.Required(node, cli, "server", rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the fixture's Python library cannot run")
	}
	url := startFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "server", "--url", url, "--requirements", rev)
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput()
	text := string(out)
	i := strings.Index(text, "=== SUMMARY")
	if i < 0 {
		t.Fatalf("no summary:\n%s", text)
	}
	summary, unscored, _ := strings.Cut(text[i:], "Not scored")
	// The "Not scored" block lists the extensions and pending scenarios
	// the run also made ("  ✗ tasks-lifecycle (extension)").
	skip := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+[✓✗] ([a-z0-9-]+) \(`).FindAllStringSubmatch(unscored, -1) {
		skip[m[1]] = true
	}
	pass, total := 0, 0
	for _, m := range summaryLine.FindAllStringSubmatch(summary, -1) {
		if skip[m[2]] {
			continue
		}
		total++
		if m[1] == "✓" && m[4] == "0" {
			pass++
			continue
		}
		t.Errorf("%s: %s passed, %s failed", m[2], m[3], m[4])
	}
	t.Logf("%s: %d/%d scored server scenarios pass", rev, pass, total)
	if total == 0 {
		t.Fatalf("no scenario was scored:\n%s", text)
	}
	if total < len(required) {
		t.Errorf("the suite scored %d scenarios, but lists %d for %s:\n%s", total, len(required), rev, text)
	}
}
