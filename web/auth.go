package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// CookieName is the name of the cookie that signs a browser in.
const CookieName = "lcp_session"

// How many sign-in tokens and signed-in browsers a server keeps: enough
// for a person's browsers, bounded against a flood of sign-ins.
const (
	maxSignIns  = 16
	maxBrowsers = 64
	// signInLife bounds how long a printed sign-in URL stays usable.
	signInLife = 24 * time.Hour
)

// auth holds the one-time sign-in tokens and the browsers signed in with
// them. As Jupyter does, the page is not handed to whoever asks: lcp
// serve prints a URL with a one-time token, the page trades it for an
// HttpOnly, SameSite=Strict cookie, and every later request shows the
// cookie (a program may send the server's token in the X-LCP-Token header
// instead). No local user can read the cookie from the server.
type auth struct {
	mu       sync.Mutex
	signIns  map[string]time.Time // token -> expiry
	browsers map[string]time.Time // cookie value -> last use
}

func (a *auth) init() {
	a.signIns = map[string]time.Time{}
	a.browsers = map[string]time.Time{}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// newSignIn makes a one-time sign-in token; the oldest is forgotten when
// there are too many.
func (a *auth) newSignIn() string {
	tok := randomHex(16)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.signIns) >= maxSignIns {
		var oldest string
		for t, exp := range a.signIns {
			if oldest == "" || exp.Before(a.signIns[oldest]) {
				oldest = t
			}
		}
		delete(a.signIns, oldest)
	}
	a.signIns[tok] = time.Now().Add(signInLife)
	return tok
}

// redeem uses up a sign-in token and returns the cookie value of a new
// browser session; ok is false for an unknown, used or expired token.
func (a *auth) redeem(tok string) (cookie string, ok bool) {
	if tok == "" {
		return "", false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var found string
	for t := range a.signIns {
		// Constant time per candidate: the tokens are secrets.
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			found = t
		}
	}
	if found == "" {
		return "", false
	}
	exp := a.signIns[found]
	delete(a.signIns, found)
	if time.Now().After(exp) {
		return "", false
	}
	return a.newBrowserLocked(), true
}

func (a *auth) newBrowserLocked() string {
	if len(a.browsers) >= maxBrowsers {
		var oldest string
		for c, used := range a.browsers {
			if oldest == "" || used.Before(a.browsers[oldest]) {
				oldest = c
			}
		}
		delete(a.browsers, oldest)
	}
	c := randomHex(32)
	a.browsers[c] = time.Now()
	return c
}

// signedIn reports whether r carries the cookie of a signed-in browser.
func (a *auth) signedIn(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.browsers[c.Value]; ok {
		a.browsers[c.Value] = time.Now()
		return true
	}
	return false
}

// SignInURL returns a URL of the page at base (scheme://host:port/) that
// carries a new one-time sign-in token: opened in a browser, it signs that
// browser in and is used up.
func (s *Server) SignInURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		u = &url.URL{Scheme: "http", Host: base}
	}
	u.Path = "/"
	u.RawQuery = url.Values{"token": {s.auth.newSignIn()}}.Encode()
	return u.String()
}

// signIn handles GET /?token=: a valid one-time token (or the server's
// own token) sets the cookie and redirects to the page without the token
// in its address.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, tok string) {
	cookie, ok := s.auth.redeem(tok)
	if !ok && s.tokenOK(tok) {
		s.auth.mu.Lock()
		cookie, ok = s.auth.newBrowserLocked(), true
		s.auth.mu.Unlock()
	}
	if !ok {
		s.signInHint(w, "This sign-in link is used up, expired or wrong.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	if s.opts.OnSignIn != nil {
		s.opts.OnSignIn()
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signInHint answers a request that is not signed in: a short page that
// says how to sign in, and nothing else (never a token).
func (s *Server) signInHint(w http.ResponseWriter, why string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("WWW-Authenticate", `LCP-Token realm="lcp"`)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>lcp: sign in</title></head><body>` +
		`<h1>Sign in</h1><p>` + why + `</p><p>Open the address <code>lcp serve</code> printed in its terminal: ` +
		`it carries a one-time sign-in token. Each use prints the next one.</p></body></html>`))
}
