package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// A 1x1 PNG.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// richTools returns a tool whose result is made of content blocks and a
// tool that asks a form with titled and multiple choices.
func richTools(t *testing.T) *native.Toolset {
	t.Helper()
	chart := mustTool(t, tool.Info{Name: "chart", Description: "Draws a chart.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, map[string]any) (any, error) {
			return []tool.Content{
				tool.TextContent("Sales per month"),
				tool.ImageContent(pixel, "image/png"),
				tool.AudioContent(make([]byte, 44), "audio/wav"),
				tool.ResourceContent("test://data.csv", "text/csv", "a,b\n1,2\n"),
				tool.ResourceLink("file:///tmp/report.pdf", "report.pdf"),
			}, nil
		})
	order := mustTool(t, tool.Info{Name: "order", Description: "Takes an order.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			return tool.AskForm(ctx, "Order", "What would you like?", json.RawMessage(`{"type":"object","properties":{
				"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"},
				"toppings":{"type":"array","items":{"anyOf":[{"const":"ham","title":"Ham"},{"const":"egg","title":"Egg"},{"const":"kale","title":"Kale"}]},"default":["egg"]},
				"count":{"type":"integer","default":2}},"required":["size"]}`), true)
		}).Interactive(tool.Capabilities{Form: true, FormValidation: true})
	hero := mustTool(t, tool.Info{Name: "hero", Description: "Asks for a hero.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			resp, err := tool.Ask(ctx, &tool.Request{Kind: tool.KindSelect, Title: "Hero", Options: []string{"h1", "h2"}, OptionTitles: []string{"Superman", "Batman"}})
			if err != nil {
				return nil, err
			}
			return fmt.Sprint("hero ", resp.Value), nil
		}).Interactive(tool.Capabilities{Select: true})
	ts, err := native.New(nil, chart, order, hero)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestBrowserRichResultsAndChoices: a result's image is shown, its other
// blocks as placeholders with their type and size; a form's titled
// choice shows titles, its multiple choice is a set of checkboxes with
// the defaults checked, and the answer carries values of the right types.
func TestBrowserRichResultsAndChoices(t *testing.T) {
	chrome := chromium()
	if chrome == "" {
		t.Skip("no Chromium installed (apt-get install chromium), or set LCP_CHROME")
	}
	e := newEnv(t, richTools(t), nil)
	p := newPage(t, chrome)
	p.do("open the page", chromedp.Navigate(e.srv.SignInURL(e.hs.URL))) // signs the browser in
	wait[bool](p, "the tools", `!!document.querySelector('details.tool[data-tool="chart"]')`)

	p.run("chart", nil)
	p.result("chart", 1)
	card := `#calls article.call[data-tool="chart"] .result`
	if w := wait[int](p, "the image decoded", `(() => { const i = document.querySelector('`+card+` img.content-image'); return i && i.complete && i.naturalWidth; })()`); w != 1 {
		t.Errorf("image width %d, want 1", w)
	}
	got := eval[string](p, `[...document.querySelectorAll('`+card+` .content-placeholder')].map((e) => e.textContent).join('\n')`)
	want := "[audio audio/wav, 44 bytes]\n[resource test://data.csv, text/csv, 8 bytes]\n[resource link file:///tmp/report.pdf]"
	if got != want {
		t.Errorf("placeholders:\n%s\nwant\n%s", got, want)
	}
	if text := eval[string](p, `document.querySelector('`+card+`').innerText`); !strings.Contains(text, "Sales per month") || strings.Contains(text, "_lcp_content") {
		t.Errorf("result text:\n%s", text)
	}

	p.run("order", nil)
	req := p.request("order", "form")
	titles := eval[string](p, `[...document.querySelectorAll('`+req+` [data-field="size"] option')].map((o) => o.textContent + '=' + o.value).join(',')`)
	if titles != "Small=s,Large=l" || eval[string](p, `document.querySelector('`+req+` [data-field="size"] select').value`) != "l" {
		t.Errorf("titled choice: %s", titles)
	}
	checked := eval[string](p, `[...document.querySelectorAll('`+req+` [data-field="toppings"] input:checked')].map((i) => i.dataset.value).join(',')`)
	if checked != `"egg"` {
		t.Errorf("checked by default: %s", checked)
	}
	p.do("choose ham too", chromedp.Click(chromedp.CSS(req+` [data-field="toppings"] label.choice:first-child input`)),
		chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	res := p.result("order", 1)
	for _, want := range []string{`"size": "l"`, `"toppings": [`, `"ham"`, `"egg"`, `"count": 2`} {
		if !strings.Contains(res, want) {
			t.Errorf("order result lacks %s:\n%s", want, res)
		}
	}

	// A titled select shows titles and answers the value.
	p.run("hero", nil)
	req = p.request("hero", "select")
	if got := eval[string](p, `[...document.querySelectorAll('`+req+` select option:not([disabled])')].map((o) => o.textContent + '=' + o.value).join(',')`); got != "Superman=h1,Batman=h2" {
		t.Errorf("titled select: %s", got)
	}
	p.do("choose Batman", chromedp.SetValue(chromedp.CSS(req+` select`), "h2"),
		chromedp.Click(chromedp.CSS(req+` button[data-action="submit"]`)))
	if res := p.result("hero", 1); !strings.Contains(res, "hero h2") {
		t.Errorf("hero: %s", res)
	}
}

// newPage starts a headless Chromium for one test; console errors and
// exceptions of the page fail the test when it ends.
func newPage(t *testing.T, chrome string) *page {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting %s: %v", chrome, err)
	}
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		for _, m := range problems {
			t.Errorf("browser console: %s", m)
		}
		mu.Unlock()
		cancel()
		cancelAlloc()
	})
	return &page{t: t, ctx: ctx}
}
