package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/web"
)

// TestBrowserToolListFollowsReloads: with an engine that watches its tool
// files (lcp serve --watch), the page in a real headless Chromium updates
// its tool list when a file is edited, without a reload of the page, and
// shows the diagnostic of a file that no longer parses while keeping its
// tools.
func TestBrowserToolListFollowsReloads(t *testing.T) {
	chrome := chromium()
	if chrome == "" {
		t.Skip("no Chromium installed (apt-get install chromium), or set LCP_CHROME")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	write := func(src string) {
		t.Helper()
		tmp := filepath.Join(dir, ".greeter.tmp")
		if err := os.WriteFile(tmp, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "greeter.py")); err != nil {
			t.Fatal(err)
		}
	}
	write(greeterPy)
	var srv *web.Server
	changed := make(chan lcp.Change, 8)
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: dir, Watch: true,
		OnChange: func(c lcp.Change) { changed <- c }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	broker := hitl.New(nil, nil)
	defer broker.Close()
	srv = web.NewServer(eng, broker, nil)
	go func() {
		for c := range changed {
			srv.ToolsChanged(strings.Join(c.Added, ","))
		}
	}()
	defer close(changed)
	hs := httptest.NewServer(srv)
	defer func() {
		_ = srv.Close()
		hs.Close()
	}()

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chrome, err)
	}
	p := &page{t: t, ctx: ctx}
	p.do("open the page", chromedp.Navigate(hs.URL+"/?token="+srv.Token()))
	wait[bool](p, "a live connection", `document.querySelector('#conn').dataset.state === 'live'`)
	wait[bool](p, "the tools", `!!document.querySelector('details.tool[data-tool="tool_greet"]')`)
	// A marker that a page reload would lose.
	eval[bool](p, `(window.__sameDocument = true)`)

	write(greeterPy + "\n\ndef tool_wave(to: str):\n    \"\"\"Waves at someone.\"\"\"\n    return 'waves at ' + to\n")
	wait[bool](p, "the new tool", `!!document.querySelector('details.tool[data-tool="tool_wave"]')`)
	if !eval[bool](p, `window.__sameDocument === true`) {
		t.Error("the page was reloaded instead of updated")
	}
	wait[bool](p, "the reload in the event log", `[...document.querySelectorAll('#log li')].some((li) => li.innerText.includes('tool_wave'))`)

	// The new tool runs, in a worker that read the new file.
	p.run("tool_wave", map[string]string{"to": "Ada"})
	if got := p.result("tool_wave", 1); !strings.Contains(got, "waves at Ada") {
		t.Errorf("tool_wave result: %q", got)
	}

	// A syntax error: the tools stay, the diagnostic shows.
	write("def tool_greet(:\n")
	wait[bool](p, "the diagnostic", `(document.querySelector('#diagnostics').textContent || '').includes('last good')`)
	if !eval[bool](p, `!!document.querySelector('details.tool[data-tool="tool_wave"]') && !!document.querySelector('details.tool[data-tool="tool_greet"]')`) {
		t.Error("the tools of the broken file went away")
	}
}
