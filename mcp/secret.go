package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lcptools/lcp/tool"
)

// secretServer serves the pages through which a person gives a secret to
// lcp directly, for MCP clients that support URL-mode elicitation: one page
// per request, at an unguessable one-time address on loopback, with a
// masked field. It starts with the first secret asked for.
type secretServer struct {
	addr string // where to listen; loopback

	mu    sync.Mutex
	ln    net.Listener
	srv   *http.Server
	base  string
	pages map[string]*secretPage
	done  bool
}

type secretPage struct {
	s        *secretServer
	token    string
	req      *tool.Request
	url      string
	value    chan string
	declined chan struct{}
	once     sync.Once
}

// open publishes a page for r and returns it; close it when done.
func (ss *secretServer) open(r *tool.Request) (*secretPage, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.done {
		return nil, errors.New("the server is closed")
	}
	if ss.ln == nil {
		addr := ss.addr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		if !isLoopbackAddr(ln.Addr().String()) {
			ln.Close()
			return nil, fmt.Errorf("the secret page must listen on loopback, not %s", ln.Addr())
		}
		ss.ln = ln
		ss.base = "http://" + ln.Addr().String()
		ss.pages = map[string]*secretPage{}
		ss.srv = &http.Server{Handler: ss, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}
		go func() { _ = ss.srv.Serve(ln) }()
	}
	p := &secretPage{s: ss, token: tool.NewID() + tool.NewID(), req: r, value: make(chan string, 1), declined: make(chan struct{})}
	p.url = ss.base + "/secret/" + p.token
	ss.pages[p.token] = p
	return p, nil
}

func (p *secretPage) close() {
	p.s.mu.Lock()
	delete(p.s.pages, p.token)
	p.s.mu.Unlock()
}

func (ss *secretServer) close() {
	ss.mu.Lock()
	ss.done = true
	srv := ss.srv
	ss.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
}

func (ss *secretServer) lookup(token string) *secretPage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for t, p := range ss.pages {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return p
		}
	}
	return nil
}

// ServeHTTP serves GET (the form) and POST (the answer) of a page.
func (ss *secretServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	if !isLoopbackHost(r.Host) {
		http.Error(w, "forbidden host", http.StatusForbidden)
		return
	}
	token, ok := strings.CutPrefix(r.URL.Path, "/secret/")
	var p *secretPage
	if ok && token != "" {
		p = ss.lookup(token)
	}
	if p == nil {
		w.WriteHeader(http.StatusNotFound)
		_ = secretTmpl().Execute(w, pageData{Closed: true})
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.Set("Content-Type", "text/html; charset=utf-8")
		_ = secretTmpl().Execute(w, pageData{Title: p.req.Title, Prompt: p.req.Prompt, Tool: p.req.Tool})
	case http.MethodPost:
		if o := r.Header.Get("Origin"); o != "" && o != "null" && !isLoopbackOrigin(o) {
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		answered := false
		p.once.Do(func() {
			answered = true
			if r.PostForm.Get("action") == "decline" {
				close(p.declined)
			} else {
				p.value <- r.PostForm.Get("value")
			}
		})
		p.close()
		h.Set("Content-Type", "text/html; charset=utf-8")
		_ = secretTmpl().Execute(w, pageData{Closed: true, Done: answered})
	default:
		h.Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

type pageData struct {
	Title, Prompt, Tool string
	Closed, Done        bool
}

// secretTmpl is parsed at the first secret asked for, not at start-up.
var secretTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("secret").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lcp — secret</title>
<style>body{font:16px system-ui,sans-serif;max-width:34em;margin:3em auto;padding:0 1em;color:#222}
input[type=password]{width:100%;font:inherit;padding:.4em;box-sizing:border-box}
button{font:inherit;padding:.4em 1.2em;margin:1em .5em 0 0}.tool{color:#666;font-size:.9em}</style></head>
<body>{{if .Closed}}{{if .Done}}<p>Received. You can close this page.</p>{{else}}<p>This request is closed.</p>{{end}}{{else}}
<h1>{{if .Title}}{{.Title}}{{else}}A secret for lcp{{end}}</h1>
{{if .Prompt}}<p>{{.Prompt}}</p>{{end}}
<p class="tool">Asked by the tool {{.Tool}}. The value goes to lcp on this computer only; it is never shown or logged.</p>
<form method="post"><input type="password" name="value" autocomplete="off" autofocus aria-label="secret">
<button type="submit" name="action" value="submit">Send</button><button type="submit" name="action" value="decline" formnovalidate>Decline</button></form>
{{end}}</body></html>
`))
})

// isLoopbackAddr reports whether host:port (or a bare host) names the
// loopback interface.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return isLoopbackHost(host)
}

// isLoopbackHost reports whether a Host header (with or without port)
// names this machine's loopback: localhost, 127.0.0.0/8 or ::1.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopbackOrigin reports whether an Origin header names a page served
// from loopback.
func isLoopbackOrigin(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "https://")
	}
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#@") {
		return false
	}
	return isLoopbackHost(rest)
}
