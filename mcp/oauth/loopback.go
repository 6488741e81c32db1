package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// receiver is the one-time HTTP listener on 127.0.0.1 that the browser is
// sent back to with the authorization code (RFC 8252, section 7.3).
type receiver struct {
	ln    net.Listener
	srv   *http.Server
	name  string // the server's name, for the page
	state string

	once sync.Once
	got  chan callback
}

// callback is what the redirect brought.
type callback struct {
	code, iss string
	err       error
}

// listenLoopback opens the receiver on 127.0.0.1:port (0: any free port)
// for the sign-in whose state parameter is state.
// The redirect never goes to a name that could resolve elsewhere, nor to
// another interface.
func listenLoopback(port int, name, state string) (*receiver, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("opening the loopback redirect listener: %w", err)
	}
	r := &receiver{ln: ln, name: name, state: state, got: make(chan callback, 1)}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// redirectURI is the URI the authorization server redirects to.
func (r *receiver) redirectURI() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", r.ln.Addr().(*net.TCPAddr).Port, callbackPath)
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		_ = r.srv.Close()
	}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != callbackPath || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		http.NotFound(w, req)
		return
	}
	q := req.URL.Query()
	// A request without this sign-in's state was not started by lcp (or
	// belongs to an older attempt): it is refused, and the sign-in goes on
	// waiting, so that a stray page cannot end it.
	if r.state == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(r.state)) != 1 {
		page(w, http.StatusBadRequest, "This sign-in link is not the one lcp is waiting for", "Start the sign-in again from lcp.")
		return
	}
	var cb callback
	switch {
	case q.Get("error") != "":
		cb.err = &AuthorizationError{Code: clean(q.Get("error")), Description: clean(q.Get("error_description"))}
		page(w, http.StatusOK, "Sign-in refused", "The authorization server says: "+cb.err.Error()+". You can close this tab.")
	case q.Get("code") == "":
		page(w, http.StatusBadRequest, "No authorization code", "The authorization server sent no code. Start the sign-in again from lcp.")
		return
	default:
		cb.code, cb.iss = q.Get("code"), q.Get("iss")
		page(w, http.StatusOK, "Signed in", fmt.Sprintf("lcp is signed in to %s. You can close this tab.", r.name))
	}
	r.once.Do(func() { r.got <- cb })
}

// wait returns the code the browser brings back, or fails when ctx ends.
func (r *receiver) wait(ctx context.Context) (callback, error) {
	select {
	case cb := <-r.got:
		return cb, cb.err
	case <-ctx.Done():
		return callback{}, ctx.Err()
	}
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>lcp: %s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// clean keeps text from a redirect fit for a terminal: printable, short.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// AuthorizationError is an error the authorization server sent back to
// the redirect (the person refused, or the request was invalid).
type AuthorizationError struct {
	Code, Description string
}

func (e *AuthorizationError) Error() string {
	if e.Description != "" {
		return fmt.Sprintf("the authorization server refused: %s (%s)", e.Code, e.Description)
	}
	return "the authorization server refused: " + e.Code
}

// openBrowser opens u in the person's browser: $BROWSER, else the
// desktop's opener. On Linux without a display it does nothing (a
// terminal browser would take over the terminal lcp prints to).
func openBrowser(u string) error {
	var cmd *exec.Cmd
	if b := os.Getenv("BROWSER"); b != "" {
		first, _, _ := strings.Cut(b, string(os.PathListSeparator))
		cmd = exec.Command(first, u)
	} else {
		switch runtime.GOOS {
		case "darwin":
			cmd = exec.Command("open", u)
		case "windows":
			cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
		default:
			if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
				return errors.New("no graphical display")
			}
			cmd = exec.Command("xdg-open", u)
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
