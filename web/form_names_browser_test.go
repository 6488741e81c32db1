package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// formMemberNames are names an HTML form element already has as members:
// a field named like one of them shadows it on the form.
var formMemberNames = []string{
	"append", "reset", "submit", "action", "method", "length", "elements",
	"name", "target", "encoding", "enctype", "acceptCharset", "noValidate",
	"checkValidity", "requestSubmit", "reportValidity", "addEventListener",
	"querySelector", "id", "className", "children", "remove", "dispatchEvent",
}

// TestBrowserFormMemberNames: a tool whose parameters are named like the
// form element's own members (as text fields and as choices) is listed,
// runs with what was typed and chosen, and its form resets.
func TestBrowserFormMemberNames(t *testing.T) {
	props := map[string]any{}
	for _, n := range formMemberNames {
		props[n] = map[string]any{"type": "string"}
		props[n+"_choice"] = map[string]any{"type": "string", "enum": []string{"a", "b"}}
	}
	// Choices named exactly like members too: a select carries the name.
	props["submit"] = map[string]any{"type": "string", "enum": []string{"a", "b"}}
	props["append"] = map[string]any{"type": "string", "enum": []string{"a", "b"}}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props})
	if err != nil {
		t.Fatal(err)
	}
	echo, err := native.Func(tool.Info{Name: "members", Description: "Echoes its arguments.", InputSchema: schema},
		func(_ context.Context, args map[string]any) (any, error) {
			b, err := json.Marshal(args)
			return string(b), err
		})
	if err != nil {
		t.Fatal(err)
	}
	_, p := openPage(t, nativeSet(t, echo.InLibrary(demoLib)))
	if msg := eval[string](p, `(document.querySelector('#libraries .error') || {}).textContent || ''`); msg != "" {
		t.Fatalf("the page says %q", msg)
	}
	for _, n := range []string{"submit", "append"} {
		sel := `details.tool[data-tool="members"] [data-field="` + n + `"] select`
		if !eval[bool](p, `(() => { const s = document.querySelector('`+sel+`'); const o = [...s.options].find((o) => o.textContent === 'b'); if (!o) return false; s.value = o.value; return true; })()`) {
			t.Fatalf("no option b for %s", n)
		}
	}
	p.run("members", map[string]string{"reset": "R", "length": "L", "elements": "E", "name": "N", "action": "A", "method": "M"})
	got := p.result("members", 1)
	for _, want := range []string{`"reset":"R"`, `"length":"L"`, `"elements":"E"`, `"name":"N"`, `"action":"A"`, `"method":"M"`, `"submit":"b"`, `"append":"b"`} {
		if !strings.Contains(strings.ReplaceAll(got, " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("the result %q lacks %s", got, want)
		}
	}
	card := `details.tool[data-tool="members"]`
	p.do("reset", chromedp.Click(chromedp.CSS(card+` .buttons button[type="button"]`)))
	if v := eval[string](p, `document.querySelector('`+card+` [data-field="reset"] input').value`); v != "" {
		t.Errorf("after Reset the field reset holds %q", v)
	}
}

// TestBrowserNarrowReflows: under 900 px the page reflows into one column
// instead of growing wider than the window (which a phone shows zoomed
// out).
func TestBrowserNarrowReflows(t *testing.T) {
	_, p := openPage(t, nativeSet(t, narrowTool(t, "narrow")))
	for _, w := range []int64{880, 600, 375} {
		p.do("resize", chromedp.EmulateViewport(w, 800))
		wide := eval[int](p, `document.documentElement.scrollWidth`)
		inner := eval[int](p, `window.innerWidth`)
		if wide > inner {
			widest := eval[string](p, `(() => { let best = null, bw = 0; for (const e of document.querySelectorAll('body *')) { const r = e.getBoundingClientRect(); if (r.right > bw) { bw = r.right; best = e; } } return best ? best.tagName + '.' + best.className + ' ' + bw : ''; })()`)
			t.Errorf("at %d px the page is %d px wide, wider than the window (%d px); the widest element: %s", w, wide, inner, widest)
		}
		cols := eval[int](p, `getComputedStyle(document.querySelector('main')).gridTemplateColumns.split(' ').length`)
		if cols != 1 {
			t.Errorf("at %d px the page has %d columns, want 1", w, cols)
		}
	}
}

func narrowTool(t *testing.T, name string) *native.Tool {
	t.Helper()
	tl, err := native.Func(tool.Info{Name: name, Description: "A tool with a long description that has to wrap on a narrow screen instead of widening the page.", InputSchema: emptySchema()},
		func(context.Context, map[string]any) (any, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	return tl.InLibrary(demoLib)
}
