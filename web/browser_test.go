package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/tool"
)

// chromium finds a Chromium or Chrome to drive; "" when there is none.
// LCP_CHROME names one explicitly.
func chromium() string {
	if p := os.Getenv("LCP_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

const greeterPy = `TOOL_LIBRARY_NAME = "Greeter"
TOOL_LIBRARY_DESC = "A Python tool library."
TOOL_LIBRARY_ICON = "🐍"


def tool_greet(name: str, user_interaction_handler=None):
    """Greets someone, asking for their title first.

    name: who to greet
    """
    print("greeting " + name, flush=True)
    title = user_interaction_handler({"type": "text", "title": "Title", "prompt": "Which title?", "default": "Dr."})
    return {"output": "Hello %s %s" % (title, name), "prompt_injection": "Be polite."}
`

// gate stands between the browser and the server: setDown(true) cuts the
// event streams and refuses the API, as a dropped network would.
type gate struct {
	h       http.Handler
	mu      sync.Mutex
	down    bool
	cancels []context.CancelFunc
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	down := g.down
	if !down && r.URL.Path == "/api/events" {
		ctx, cancel := context.WithCancel(r.Context())
		g.cancels = append(g.cancels, cancel)
		r = r.WithContext(ctx)
	}
	g.mu.Unlock()
	if down && strings.HasPrefix(r.URL.Path, "/api/") {
		http.Error(w, `{"error":"down for the test"}`, http.StatusServiceUnavailable)
		return
	}
	g.h.ServeHTTP(w, r)
}

func (g *gate) setDown(down bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.down = down
	if down {
		for _, c := range g.cancels {
			c()
		}
		g.cancels = nil
	}
}

// page drives the browser.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, hangAfter)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// typeKeys types v into the first visible node sel finds, as
// chromedp.SendKeys does for a text field. SendKeys itself reads the
// node's attributes before taking the node's lock, while chromedp's DOM
// event loop may be changing them (the page sets attributes as a field
// is filled): a data race in chromedp that -race reports in our tests.
func typeKeys[S chromedp.Selectable](sel S, v string) chromedp.Action[chromedp.Void] {
	return chromedp.QueryAfter(sel, func(ctx context.Context, t *chromedp.Target, nodes []*chromedp.Node) (chromedp.Void, error) {
		if len(nodes) == 0 {
			return chromedp.Void{}, fmt.Errorf("selector %v found no node to type into", sel)
		}
		return chromedp.KeyEventNode(nodes[0], v)(ctx, t)
	}, chromedp.NodeVisible)
}

// eval evaluates a JavaScript expression.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, hangAfter)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// wait polls a JavaScript expression until it is truthy and returns it.
func wait[T any](p *page, what, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, hangAfter)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(hangAfter)))
	if err != nil {
		p.t.Fatalf("waiting for %s: %v", what, err)
	}
	return v
}

// run opens a tool's card, fills fields (name -> value) and clicks Run.
func (p *page) run(toolName string, fields map[string]string) {
	p.t.Helper()
	card := `details.tool[data-tool="` + toolName + `"]`
	open := eval[bool](p, `document.querySelector('`+card+`').open`)
	if !open {
		p.do("open "+toolName, chromedp.Click(chromedp.CSS(card+" > summary")))
	}
	for name, v := range fields {
		sel := chromedp.CSS(card + ` [data-field="` + name + `"] input, ` + card + ` [data-field="` + name + `"] textarea`)
		p.do("fill "+name, chromedp.Clear(sel), typeKeys(sel, v))
	}
	p.do("run "+toolName, chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
}

// result waits until n calls of the tool are done and returns the text of
// the newest one's result.
func (p *page) result(toolName string, n int) string {
	p.t.Helper()
	return wait[string](p, toolName+" result", `(() => {
		const done = document.querySelectorAll('#calls article.call[data-tool="`+toolName+`"][data-state="done"]');
		return done.length >= `+strconv.Itoa(n)+` && done[0].querySelector('.result').innerText;
	})()`)
}

// request waits for a pending request of the tool and kind and returns its
// CSS selector.
func (p *page) request(toolName, kind string) string {
	p.t.Helper()
	sel := `#pending article.request[data-tool="` + toolName + `"][data-kind="` + kind + `"]`
	id := wait[string](p, kind+" request of "+toolName, `(() => { const r = document.querySelector('`+sel+`'); return r && r.dataset.id; })()`)
	return `#pending article.request[data-id="` + id + `"]`
}

// TestBrowser drives the page in a real headless Chromium: native and
// Python tools, confirmations allowed and rejected with feedback, a
// secret, a select, a form, two requests pending at once across a reload.
func TestBrowser(t *testing.T) {
	chrome := chromium()
	if chrome == "" {
		t.Skip("no Chromium installed (apt-get install chromium), or set LCP_CHROME")
	}
	const secret = "hunter2-correct-horse-battery"

	// The inventory: the native test tools, and a Python library when
	// python3 is there.
	var inv tool.Toolset = testTools(t)
	havePython := false
	if _, err := exec.LookPath("python3"); err == nil {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "greeter.py"), []byte(greeterPy), 0o644); err != nil {
			t.Fatal(err)
		}
		// The page subscribes to the events of the calls it makes: what
		// the Python tool prints reaches it without any wiring.
		eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: dir})
		if err != nil {
			t.Fatal(err)
		}
		inv = tool.Compose(inv, eng)
		havePython = true
	}
	e := newEnv(t, inv, nil)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser, without a timeout
		t.Fatalf("starting %s: %v", chrome, err)
	}
	var consoleMu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// The 503s of the gate are expected; anything else is not.
			if (m.IsException() || m.Type == chromedp.ConsoleError) && !strings.Contains(m.Text, "503") {
				consoleMu.Lock()
				problems = append(problems, m.String())
				consoleMu.Unlock()
			}
		}
	}()
	p := &page{t: t, ctx: ctx}

	gate := &gate{h: e.srv}
	gs := httptest.NewServer(gate)
	defer func() {
		_ = e.srv.Close() // ends the event streams, which Close waits for
		gs.Close()
	}()
	// The printed address signs the browser in once: the page trades its
	// one-time token for a cookie that scripts cannot read.
	p.do("open the page", chromedp.Navigate(e.srv.SignInURL(gs.URL)))
	wait[bool](p, "a live connection", `!!document.querySelector('#conn') && document.querySelector('#conn').dataset.state === 'live'`)
	if got := eval[string](p, `location.search + document.cookie`); got != "" {
		t.Errorf("after sign-in, the address or document.cookie shows %q", got)
	}
	wait[bool](p, "the tools", `!!document.querySelector('details.tool[data-tool="echo"]')`)
	if got := eval[string](p, `document.querySelector('.library[data-library="demo"] header').innerText`); !strings.Contains(got, "Demo tools") || !strings.Contains(got, "🧪") {
		t.Errorf("library header: %q", got)
	}
	if got := eval[string](p, `document.querySelector('.library[data-library="demo"] .lib-desc').textContent`); got != "Tools that ask things." {
		t.Errorf("library description: %q", got)
	}

	// The form of echo: defaults prefilled, required marked.
	p.do("open echo", chromedp.Click(chromedp.CSS(`details.tool[data-tool="echo"] > summary`)))
	if got := eval[string](p, `document.querySelector('[data-tool="echo"] [data-field="times"] input').value`); got != "1" {
		t.Errorf("default of times: %q", got)
	}
	if got := eval[string](p, `document.querySelector('[data-tool="echo"] [data-field="tags"] textarea').value`); !strings.Contains(got, `"a"`) {
		t.Errorf("default of tags: %q", got)
	}
	if !eval[bool](p, `!!document.querySelector('[data-tool="echo"] [data-field="text"] .req') && !document.querySelector('[data-tool="echo"] [data-field="times"] .req')`) {
		t.Error("required fields are not marked")
	}
	// A client-side error for a missing required field; no call is made.
	p.do("run echo empty", chromedp.Click(chromedp.CSS(`details.tool[data-tool="echo"] button[type="submit"]`)))
	wait[string](p, "the form error", `document.querySelector('[data-tool="echo"] .form-error').textContent`)

	// A native tool, its result with prompt_injection and payload keys.
	p.run("echo", map[string]string{"text": "hi", "times": "2"})
	res := p.result("echo", 1)
	for _, want := range []string{"hihi", "prompt_injection", "Say thanks.", "count", "2"} {
		if !strings.Contains(res, want) {
			t.Errorf("echo result lacks %q:\n%s", want, res)
		}
	}
	// A failure: error shown, traceback collapsed.
	p.run("fails", nil)
	res = p.result("fails", 1)
	if !strings.Contains(res, "it broke") || !strings.Contains(res, "Traceback") || strings.Contains(res, "boom") {
		t.Errorf("failure (traceback should be collapsed):\n%s", res)
	}
	if !eval[bool](p, `!document.querySelector('#calls article.call[data-tool="fails"] details.traceback').open`) {
		t.Error("the traceback is not collapsed")
	}

	// A confirmation, allowed.
	p.run("guarded", nil)
	req := p.request("guarded", "confirm")
	if got := eval[string](p, `document.querySelector('`+req+` pre.source').textContent`); got != "rm -rf build/" {
		t.Errorf("confirmation source: %q", got)
	}
	p.do("allow", chromedp.Click(chromedp.CSS(req+` button[data-action="allow"]`)))
	if res := p.result("guarded", 1); !strings.Contains(res, "deleted build/ (allow)") {
		t.Errorf("allowed: %s", res)
	}

	// A confirmation, rejected with feedback that reaches the tool.
	p.run("guarded", nil)
	req = p.request("guarded", "confirm")
	p.do("feedback", typeKeys(chromedp.CSS(req+` textarea.feedback`), "not on a Friday"),
		chromedp.Click(chromedp.CSS(req+` button[data-action="reject"]`)))
	if res := p.result("guarded", 2); !strings.Contains(res, "rejected: not on a Friday") {
		t.Errorf("rejected: %s", res)
	}

	// A secret: a masked field, and the value nowhere afterwards.
	p.run("login", nil)
	req = p.request("login", "secret")
	if typ := eval[string](p, `document.querySelector('`+req+` input.answer').type`); typ != "password" {
		t.Errorf("secret field type %q", typ)
	}
	p.do("type the secret", typeKeys(chromedp.CSS(req+` input.answer`), secret),
		chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	if res := p.result("login", 1); !strings.Contains(res, "got a key of 29 characters") {
		t.Errorf("secret: %s", res)
	}
	wait[bool](p, "the secret's answer in the log", `document.querySelector('#log').textContent.includes('secret answered')`)
	dom := eval[string](p, `document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((i) => i.value).join('\n')`)
	logText := eval[string](p, `document.querySelector('#log').textContent`)
	for what, text := range map[string]string{"DOM": dom, "event log": logText, "server log": e.logs.String()} {
		if strings.Contains(text, secret) || strings.Contains(text, secret[:12]) {
			t.Errorf("the secret appears in the %s", what)
		}
	}

	// A select: the default preselected, another chosen.
	p.run("pick", nil)
	req = p.request("pick", "select")
	if got := eval[string](p, `document.querySelector('`+req+` select').value`); got != "green" {
		t.Errorf("preselected %q, want green", got)
	}
	p.do("choose", chromedp.SetValue(chromedp.CSS(req+` select`), "blue"),
		chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	if res := p.result("pick", 1); !strings.Contains(res, "picked blue") {
		t.Errorf("select: %s", res)
	}

	// A form.
	p.run("survey", nil)
	req = p.request("survey", "form")
	p.do("fill the form", typeKeys(chromedp.CSS(req+` [data-field="name"] input`), "Ada"),
		chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	if res := p.result("survey", 1); !strings.Contains(res, `"name": "Ada"`) || !strings.Contains(res, `"age": 30`) {
		t.Errorf("form: %s", res)
	}

	// Two requests at once, both listed, still listed after a reload,
	// both answered.
	p.run("guarded", nil)
	p.run("pick", nil)
	wait[bool](p, "two pending requests", `document.querySelectorAll('#pending article.request').length === 2`)
	p.do("reload", chromedp.Reload())
	wait[bool](p, "live again", `document.querySelector('#conn').dataset.state === 'live'`)
	wait[bool](p, "two pending requests after the reload", `document.querySelectorAll('#pending article.request').length === 2 && document.querySelector('#pending-count').textContent === '2'`)
	if n := eval[int](p, `document.querySelectorAll('#calls article.call').length`); n != 9 {
		t.Errorf("%d calls listed after the reload, want 9", n)
	}
	if !eval[bool](p, `document.querySelector('#log').childElementCount > 10`) {
		t.Error("the event log is empty after the reload")
	}
	if path := os.Getenv("LCP_WEB_SCREENSHOT"); path != "" {
		// For people who want to look at the page: two requests waiting.
		shot, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err == nil {
			err = os.WriteFile(path, shot, 0o644)
		}
		if err != nil {
			t.Logf("screenshot: %v", err)
		}
	}
	req = p.request("pick", "select")
	p.do("answer the select", chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	req = p.request("guarded", "confirm")
	p.do("allow again", chromedp.Click(chromedp.CSS(req+` button[data-action="allow"]`)))
	if res := p.result("pick", 2); !strings.Contains(res, "picked green") {
		t.Errorf("second select: %s", res)
	}
	if res := p.result("guarded", 3); !strings.Contains(res, "deleted build/ (allow)") {
		t.Errorf("second allow: %s", res)
	}
	wait[bool](p, "nothing pending", `document.querySelectorAll('#pending article.request').length === 0`)

	// The connection breaks (the event stream is cut and the API refuses
	// for a while); a request opened meanwhile is there once the page has
	// reconnected by itself.
	gate.setDown(true)
	wait[bool](p, "the page offline", `document.querySelector('#conn').dataset.state === 'offline'`)
	e.call("pick", `{}`)
	e.waitPending(1)
	gate.setDown(false)
	wait[bool](p, "live again", `document.querySelector('#conn').dataset.state === 'live'`)
	req = p.request("pick", "select")
	p.do("answer after reconnecting", chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	if res := p.result("pick", 3); !strings.Contains(res, "picked green") {
		t.Errorf("select after reconnecting: %s", res)
	}

	// A Python tool: its question, its printed output in the log.
	if havePython {
		wait[bool](p, "the Python library", `!!document.querySelector('details.tool[data-tool="tool_greet"]')`)
		p.run("tool_greet", map[string]string{"name": "Ada"})
		req = p.request("tool_greet", "text")
		if got := eval[string](p, `document.querySelector('`+req+` input.answer').value`); got != "Dr." {
			t.Errorf("text default %q", got)
		}
		p.do("answer the title", chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
		res := p.result("tool_greet", 1)
		if !strings.Contains(res, "Hello Dr. Ada") || !strings.Contains(res, "Be polite.") {
			t.Errorf("python result: %s", res)
		}
		wait[bool](p, "the tool's print in the log", `document.querySelector('#log').textContent.includes('greeting Ada')`)
	}

	consoleMu.Lock()
	defer consoleMu.Unlock()
	for _, m := range problems {
		t.Errorf("browser console: %s", m)
	}
}
