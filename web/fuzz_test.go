package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lcptools/lcp/web"
)

// FuzzAPI posts arbitrary bodies to the endpoints that decode them: the
// server must answer with a JSON status below 500 and never panic.
func FuzzAPI(f *testing.F) {
	for _, s := range []string{
		`{"tool":"echo","args":{"text":"x"}}`, `{"tool":"echo","args":[1]}`, `{"tool":5}`, `{"tool":"echo"} {}`,
		`{"action":"submit","value":"red"}`, `{"action":"submit","value":{"a":1}}`, `{"action":"decline","reason":"no"}`,
		`{"library":"demo","label":"x"}`, `{"all":true}`, `{`, ``, `null`, `[]`, `"x"`, "\xff", `{"tool":"\u0000"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e := newEnv(t, testTools(t), &web.Options{MaxBodyBytes: 1 << 12, MaxCalls: 4})
		e.call("pick", `{}`)
		id := e.waitPending(1)[0].Request.ID
		for _, path := range []string{"/api/requests/" + id + "/answer", "/api/grants/revoke", "/api/calls", "/api/calls/x/cancel"} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Header.Set(web.TokenHeader, e.srv.Token())
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, req)
			if w.Code >= 500 {
				t.Fatalf("POST %s %q: %d %s", path, body, w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("POST %s %q: Content-Type %q", path, body, ct)
			}
			if w.Code >= 400 && !strings.Contains(w.Body.String(), `"error"`) {
				t.Fatalf("POST %s %q: %d without an error message: %s", path, body, w.Code, w.Body)
			}
		}
	})
}
