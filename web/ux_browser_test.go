package web_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// The browser tests of this file each drive one feature of the page in a
// real headless Chromium, signed in through the one-time address: what a
// tool may ask, long library descriptions, a finished call's printed
// output and duration, progress bars, audio, rejected confirmations and
// tool annotations.

func yes() *bool { b := true; return &b }

// openPage serves ts and opens the page in a fresh browser, signed in.
func openPage(t *testing.T, ts tool.Toolset) (*env, *page) {
	t.Helper()
	chrome := chromium()
	if chrome == "" {
		t.Skip("no Chromium installed (apt-get install chromium), or set LCP_CHROME")
	}
	e := newEnv(t, ts, nil)
	p := newPage(t, chrome)
	p.do("open the page", chromedp.Navigate(e.srv.SignInURL(e.hs.URL)))
	wait[bool](p, "a live connection", `document.querySelector('#conn').dataset.state === 'live'`)
	wait[bool](p, "the tools", `!!document.querySelector('details.tool')`)
	return e, p
}

func nativeSet(t *testing.T, tools ...*native.Tool) *native.Toolset {
	t.Helper()
	ts, err := native.New(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func emptySchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

// TestBrowserMayAsk: "may ask" lists what each tool can ask: a native
// tool's declared kinds; for a Python tool, what its source shows (every
// Python tool declares every kind); nothing for a tool that asks nothing.
func TestBrowserMayAsk(t *testing.T) {
	var inv tool.Toolset = testTools(t)
	python := false
	if _, err := exec.LookPath("python3"); err == nil {
		dir := t.TempDir()
		src := greeterPy + `

def tool_shout(text: str):
    """Shouts the text."""
    return text.upper()


_CONFIRM_HANDLER = None


def set_confirm_handler(handler):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def tool_wipe(path: str):
    """Wipes a path after approval."""
    decision, reason = _CONFIRM_HANDLER("rm -rf " + path, "wipe")
    return decision
`
		if err := os.WriteFile(filepath.Join(dir, "greeter.py"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: dir})
		if err != nil {
			t.Fatal(err)
		}
		inv = tool.Compose(inv, eng)
		python = true
	}
	_, p := openPage(t, inv)
	want := map[string]string{
		"echo":    "",
		"guarded": "confirm",
		"login":   "secret",
		"pick":    "select",
		"note":    "text",
		"survey":  "form",
	}
	if python {
		want["tool_greet"] = "text"
		want["tool_shout"] = ""
		want["tool_wipe"] = "confirm"
	}
	for name, kinds := range want {
		got := wait[string](p, name, `(() => {
			const t = document.querySelector('details.tool[data-tool="`+name+`"]');
			if (!t) return '';
			const m = t.querySelector('.may-ask');
			return m ? m.dataset.kinds + '|' + m.textContent : '-';
		})()`)
		if kinds == "" {
			if got != "-" {
				t.Errorf("%s: may ask %q, want nothing", name, got)
			}
			continue
		}
		if k, _, _ := strings.Cut(got, "|"); k != kinds {
			t.Errorf("%s: may ask %q, want %s", name, got, kinds)
		}
	}
	if got := eval[string](p, `document.querySelector('details.tool[data-tool="guarded"] .may-ask').textContent`); got != "may ask for approval" {
		t.Errorf("guarded reads %q", got)
	}
	if !python {
		t.Log("python3 is not installed: the Python tools were not checked")
	}
}

// TestBrowserLongLibraryDescription: a long library description is
// collapsed to its beginning and opens on a click; a short one is shown
// as it is.
func TestBrowserLongLibraryDescription(t *testing.T) {
	long := "Tools for the warehouse: stock levels, orders and deliveries, with every report the planners asked for over the years. " +
		strings.Repeat("It also knows about suppliers, prices and the weather at the docks. ", 4) + "\nSecond paragraph."
	wh := tool.Library{ID: "warehouse", Name: "Warehouse", Description: long}
	stock, err := native.Func(tool.Info{Name: "stock", Description: "Stock of an item.", InputSchema: emptySchema()},
		func(context.Context, map[string]any) (any, error) { return 3, nil })
	if err != nil {
		t.Fatal(err)
	}
	_, p := openPage(t, tool.Compose(testTools(t), nativeSet(t, stock.InLibrary(wh))))
	lib := `.library[data-library="warehouse"]`
	wait[bool](p, "the warehouse", `!!document.querySelector('`+lib+`')`)
	if !eval[bool](p, `(() => { const d = document.querySelector('`+lib+` details.lib-desc'); return !!d && !d.open; })()`) {
		t.Fatal("the long description is not collapsed")
	}
	shown := eval[string](p, `document.querySelector('`+lib+` details.lib-desc').innerText`)
	if !strings.HasPrefix(shown, "Tools for the warehouse") || strings.Contains(shown, "Second paragraph") || len(shown) > 200 {
		t.Errorf("collapsed, it shows %q", shown)
	}
	p.do("open the description", chromedp.Click(chromedp.CSS(lib+` details.lib-desc > summary`)))
	full := wait[string](p, "the whole description", `(() => { const d = document.querySelector('`+lib+` details.lib-desc'); return d.open && d.innerText; })()`)
	if !strings.Contains(full, "Second paragraph.") || !strings.Contains(full, "weather at the docks") {
		t.Errorf("opened, it shows %q", full)
	}
	if got := eval[string](p, `document.querySelector('.library[data-library="demo"] p.lib-desc').textContent`); got != "Tools that ask things." {
		t.Errorf("the short description reads %q", got)
	}
}

// TestBrowserCallKeepsOutputAndDuration: what a tool printed and logged
// stays on its card once it has finished, also after a reload, and the
// card says how long the call took.
func TestBrowserCallKeepsOutputAndDuration(t *testing.T) {
	talk, err := native.Func(tool.Info{Name: "talk", Description: "Prints, logs, works.", InputSchema: emptySchema()},
		func(ctx context.Context, _ map[string]any) (any, error) {
			c := tool.CallFromContext(ctx)
			c.Emit(tool.Event{Kind: tool.EventOutput, Stream: "stdout", Text: "first line\n"})
			tool.Log(ctx, "warning", "disk almost full")
			time.Sleep(300 * time.Millisecond)
			c.Emit(tool.Event{Kind: tool.EventOutput, Stream: "stderr", Text: "second line\n"})
			return "done", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	_, p := openPage(t, nativeSet(t, talk.InLibrary(demoLib)))
	p.run("talk", nil)
	p.result("talk", 1)
	card := `#calls article.call[data-tool="talk"]`
	check := func(when string) {
		printed := wait[string](p, "the printed output "+when, `(() => { const o = document.querySelector('`+card+` .live-output'); return o && !o.hidden && o.textContent; })()`)
		if printed != "first line\nwarning: disk almost full\nsecond line\n" {
			t.Errorf("%s, the card shows %q", when, printed)
		}
		if n := eval[int](p, `document.querySelectorAll('`+card+` .live-output .stream-stderr, `+card+` .live-output .stream-log').length`); n != 2 {
			t.Errorf("%s: %d pieces marked stderr or log, want 2", when, n)
		}
		ms := eval[int](p, `+document.querySelector('`+card+` .duration').dataset.ms`)
		text := eval[string](p, `document.querySelector('`+card+` .duration').textContent`)
		if ms < 300 || ms > 10000 || !strings.HasSuffix(text, " ms") && !strings.HasSuffix(text, " s") {
			t.Errorf("%s: duration %d ms shown as %q", when, ms, text)
		}
	}
	check("when it ends")
	p.do("reload", chromedp.Reload())
	wait[bool](p, "live again", `document.querySelector('#conn').dataset.state === 'live'`)
	check("after a reload")
}

// TestBrowserProgress: a running call shows the progress its tool reports
// as a bar with the percentage and message, also after a reload; the bar
// is gone once the call is done.
func TestBrowserProgress(t *testing.T) {
	step := make(chan struct{})
	work, err := native.Func(tool.Info{Name: "work", Description: "Works in four steps.", InputSchema: emptySchema()},
		func(ctx context.Context, _ map[string]any) (any, error) {
			for i := 1; i <= 4; i++ {
				select {
				case <-step:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				tool.ReportProgress(ctx, float64(i), 4, "step "+string(rune('0'+i)))
			}
			return "worked", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	count, err := native.Func(tool.Info{Name: "count", Description: "Counts without a total.", InputSchema: emptySchema()},
		func(ctx context.Context, _ map[string]any) (any, error) {
			tool.ReportProgress(ctx, 7, 0, "files")
			<-step
			return "counted", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	_, p := openPage(t, nativeSet(t, work.InLibrary(demoLib), count.InLibrary(demoLib)))
	p.run("work", nil)
	card := `#calls article.call[data-tool="work"]`
	bar := func(what string) string {
		return wait[string](p, what, `(() => {
			const b = document.querySelector('`+card+` .call-progress');
			return b && b.querySelector('progress').value + '/' + b.querySelector('progress').max + ' ' + b.querySelector('.progress-text').textContent;
		})()`)
	}
	step <- struct{}{}
	step <- struct{}{}
	wait[bool](p, "half way", `(() => { const b = document.querySelector('`+card+` .call-progress progress'); return !!b && b.value === 2; })()`)
	if got := bar("the bar"); got != "2/4 50% step 2" {
		t.Errorf("bar %q", got)
	}
	p.do("reload", chromedp.Reload())
	wait[bool](p, "live again", `document.querySelector('#conn').dataset.state === 'live'`)
	if got := bar("the bar after a reload"); got != "2/4 50% step 2" {
		t.Errorf("after a reload, bar %q", got)
	}
	step <- struct{}{}
	wait[bool](p, "three quarters", `(() => { const b = document.querySelector('`+card+` .call-progress progress'); return !!b && b.value === 3; })()`)
	step <- struct{}{}
	p.result("work", 1)
	if eval[bool](p, `!!document.querySelector('`+card+` .call-progress')`) {
		t.Error("a finished call still shows its progress bar")
	}

	p.run("count", nil)
	got := wait[string](p, "a count", `(() => {
		const b = document.querySelector('#calls article.call[data-tool="count"] .call-progress');
		return b && (b.querySelector('progress').hasAttribute('value') ? 'value' : 'moving') + ' ' + b.querySelector('.progress-text').textContent;
	})()`)
	if got != "moving 7 files" {
		t.Errorf("progress without a total: %q", got)
	}
	step <- struct{}{}
	p.result("count", 1)
}

// wav returns a valid WAV file: 0.1 s of a 440 Hz tone, 8 kHz, 8 bits.
func wav() []byte {
	const rate, n = 8000, 800
	b := make([]byte, 44+n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], rate)
	binary.LittleEndian.PutUint16(b[32:], 1)
	binary.LittleEndian.PutUint16(b[34:], 8)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], n)
	for i := 0; i < n; i++ {
		b[44+i] = byte(128 + 100*math.Sin(2*math.Pi*440*float64(i)/rate))
	}
	return b
}

// TestBrowserAudioAndResources: a result's sound is a player the browser
// can load (the page's Content-Security-Policy allows it), with its type
// and size beside it; resources are placeholders with type and size.
func TestBrowserAudioAndResources(t *testing.T) {
	sound := wav()
	play, err := native.Func(tool.Info{Name: "play", Description: "Returns a sound and a file.", InputSchema: emptySchema()},
		func(context.Context, map[string]any) (any, error) {
			return []tool.Content{tool.TextContent("A tone"), tool.AudioContent(sound, "audio/wav"),
				tool.ResourceContent("test://notes.txt", "text/plain", "do re mi\n")}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	_, p := openPage(t, nativeSet(t, play.InLibrary(demoLib)))
	p.run("play", nil)
	p.result("play", 1)
	res := `#calls article.call[data-tool="play"] .result`
	dur := wait[float64](p, "the sound loaded", `(() => { const a = document.querySelector('`+res+` audio'); return a && a.readyState >= 1 && a.duration; })()`)
	if dur < 0.09 || dur > 0.11 {
		t.Errorf("the player says the sound lasts %v s, want 0.1", dur)
	}
	if !eval[bool](p, `document.querySelector('`+res+` audio').controls`) {
		t.Error("the player has no controls")
	}
	got := eval[string](p, `[...document.querySelectorAll('`+res+` .content-placeholder')].map((e) => e.textContent).join('\n')`)
	if want := "[audio audio/wav, 844 bytes]\n[resource test://notes.txt, text/plain, 9 bytes]"; got != want {
		t.Errorf("placeholders:\n%s\nwant\n%s", got, want)
	}
}

// TestBrowserRejectedCall: a call whose confirmation was declined reads
// as rejected, with the reason, not as a generic failure; an allowed one
// reads ok.
func TestBrowserRejectedCall(t *testing.T) {
	_, p := openPage(t, testTools(t))
	p.run("guarded", nil)
	req := p.request("guarded", "confirm")
	p.do("reject", typeKeys(chromedp.CSS(req+` textarea.feedback`), "not today"),
		chromedp.Click(chromedp.CSS(req+` button[data-action="reject"]`)))
	p.result("guarded", 1)
	card := `#calls article.call[data-tool="guarded"]`
	if got := eval[string](p, `document.querySelector('`+card+` .status').className + ' ' + document.querySelector('`+card+` .status').textContent`); got != "status rejected rejected" {
		t.Errorf("status %q", got)
	}
	if got := eval[string](p, `document.querySelector('`+card+` .rejection').textContent`); got != "Approval rejected for delete: not today" {
		t.Errorf("rejection %q", got)
	}
	p.run("guarded", nil)
	req = p.request("guarded", "confirm")
	p.do("allow", chromedp.Click(chromedp.CSS(req+` button[data-action="allow"]`)))
	p.result("guarded", 2)
	if got := eval[string](p, `document.querySelector('`+card+` .status').textContent`); got != "200 ok" {
		t.Errorf("allowed: status %q", got)
	}
	if eval[bool](p, `!!document.querySelector('`+card+`').querySelector('.rejection')`) {
		t.Error("the allowed call says it was rejected")
	}
	p.do("reload", chromedp.Reload())
	wait[bool](p, "live again", `document.querySelector('#conn').dataset.state === 'live'`)
	if got := wait[string](p, "the rejected call after a reload", `(() => { const s = document.querySelectorAll('`+card+` .status'); return s.length === 2 && s[1].textContent; })()`); got != "rejected" {
		t.Errorf("after a reload, the rejected call reads %q", got)
	}
}

// TestBrowserAnnotations: a tool's title is shown beside its name, and
// its hints as badges: read-only, destructive (only when not read-only),
// idempotent, open world; no badge for a hint not set.
func TestBrowserAnnotations(t *testing.T) {
	mk := func(name, title string, a *tool.Annotations) *native.Tool {
		tl, err := native.Func(tool.Info{Name: name, Title: title, Description: "A tool.", InputSchema: emptySchema(), Annotations: a},
			func(context.Context, map[string]any) (any, error) { return "ok", nil })
		if err != nil {
			t.Fatal(err)
		}
		return tl.InLibrary(demoLib)
	}
	no := func() *bool { b := false; return &b }
	_, p := openPage(t, nativeSet(t,
		mk("read", "Read a file", &tool.Annotations{ReadOnlyHint: yes(), DestructiveHint: yes()}),
		mk("erase", "", &tool.Annotations{Title: "Erase the disk", DestructiveHint: yes(), OpenWorldHint: no()}),
		mk("fetch", "", &tool.Annotations{ReadOnlyHint: no(), DestructiveHint: no(), IdempotentHint: yes(), OpenWorldHint: yes()}),
		mk("plain", "", nil)))
	want := map[string]string{
		"read":  "Read a file|read-only",
		"erase": "Erase the disk|destructive",
		"fetch": "|idempotent open-world",
		"plain": "|",
	}
	for name, w := range want {
		got := eval[string](p, `(() => {
			const s = document.querySelector('details.tool[data-tool="`+name+`"] > summary');
			const title = s.querySelector('.tool-title');
			return (title ? title.textContent.trim() : '') + '|' + [...s.querySelectorAll('.hint')].map((b) => b.dataset.hint).join(' ');
		})()`)
		if got != w {
			t.Errorf("%s: %q, want %q", name, got, w)
		}
	}
	if got := eval[string](p, `document.querySelector('details.tool[data-tool="erase"] .hint').title`); !strings.Contains(got, "delete or overwrite") {
		t.Errorf("the destructive badge explains %q", got)
	}
}

// TestBrowserPythonProgress: a Python tool's progress_handler is a bar on
// its card while it runs, and its log_handler's record stays on the card.
func TestBrowserPythonProgress(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	src := `import time


def tool_convert(pages: int = 3, progress_handler=None, log_handler=None):
    """Converts pages, reporting progress."""
    for i in range(1, pages + 1):
        progress_handler(i, pages, f"page {i}")
        time.sleep(0.4)
    log_handler("almost done", level="warning")
    return "converted"
`
	if err := os.WriteFile(filepath.Join(dir, "convert.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, p := openPage(t, eng)
	p.run("tool_convert", nil)
	card := `#calls article.call[data-tool="tool_convert"]`
	got := wait[string](p, "the bar", `(() => {
		const b = document.querySelector('`+card+`[data-state="running"] .call-progress');
		return b && b.querySelector('progress').max === 3 && b.querySelector('.progress-text').textContent;
	})()`)
	if !strings.Contains(got, "% page ") {
		t.Errorf("bar text %q", got)
	}
	if res := p.result("tool_convert", 1); !strings.Contains(res, "converted") {
		t.Errorf("result %q", res)
	}
	if got := eval[string](p, `document.querySelector('`+card+` .live-output').textContent`); got != "warning: almost done\n" {
		t.Errorf("printed %q", got)
	}
}
