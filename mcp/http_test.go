package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func post(t *testing.T, url, body string, header map[string]string, chunked bool) *http.Response {
	t.Helper()
	var r io.Reader = strings.NewReader(body)
	if chunked {
		r = io.MultiReader(strings.NewReader(body)) // no length known: sent chunked
	}
	req, err := http.NewRequest(http.MethodPost, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHTTPSafety(t *testing.T) {
	srv := newTestServer(t, nil)
	open := serveHTTP(t, srv, &HTTPOptions{AllowedOrigins: []string{"https://app.example"}, MaxBodyBytes: 1024})
	const token = "a-long-enough-test-token"
	locked := serveHTTP(t, srv, &HTTPOptions{Token: token})
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`

	cases := []struct {
		name    string
		url     string
		body    string
		header  map[string]string
		chunked bool
		want    int
	}{
		{"plain client", open, initBody, nil, false, http.StatusOK},
		{"loopback page", open, initBody, map[string]string{"Origin": "http://localhost:5173"}, false, http.StatusOK},
		{"allowed origin", open, initBody, map[string]string{"Origin": "https://app.example"}, false, http.StatusOK},
		{"foreign origin", open, initBody, map[string]string{"Origin": "https://evil.example"}, false, http.StatusForbidden},
		{"lookalike origin", open, initBody, map[string]string{"Origin": "http://localhost.evil.example"}, false, http.StatusForbidden},
		{"rebound host", open, initBody, map[string]string{"Host": "evil.example:80"}, false, http.StatusForbidden},
		{"oversize body", open, big, nil, false, http.StatusRequestEntityTooLarge},
		{"oversize chunked body", open, big, nil, true, http.StatusRequestEntityTooLarge},
		{"no token", locked, initBody, nil, false, http.StatusUnauthorized},
		{"wrong token", locked, initBody, map[string]string{"Authorization": "Bearer nope"}, false, http.StatusUnauthorized},
		{"token", locked, initBody, map[string]string{"Authorization": "Bearer " + token}, false, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, tc.url, tc.body, tc.header, tc.chunked)
			if resp.StatusCode != tc.want {
				b, _ := io.ReadAll(resp.Body)
				t.Errorf("status = %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestHTTPPreflight(t *testing.T) {
	srv := newTestServer(t, nil)
	url := serveHTTP(t, srv, nil)
	for origin, want := range map[string]int{"http://127.0.0.1:8080": http.StatusNoContent, "https://evil.example": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodOptions, url, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("preflight from %s = %d, want %d", origin, resp.StatusCode, want)
		}
	}
}

func TestListenNeedsATokenOffLoopback(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0"} {
		if _, err := Listen(addr, nil); !errors.Is(err, ErrTokenRequired) {
			t.Errorf("Listen(%q) = %v, want ErrTokenRequired", addr, err)
		}
	}
	ln, err := Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, nil) }()
	resp := post(t, "http://"+ln.Addr().String()+"/mcp", initBody, nil, false)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status = %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

func TestLoopbackNames(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "localhost:80": true, "127.0.0.1": true, "127.8.9.1:443": true, "[::1]:9": true, "::1": true, "app.localhost": true,
		"evil.example": false, "localhost.evil.example": false, "10.0.0.1": false, "": false, "[::]:80": false,
	} {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v", host, got)
		}
	}
	for origin, want := range map[string]bool{
		"http://localhost:3000": true, "https://127.0.0.1": true, "http://[::1]:8080": true,
		"null": false, "file://": false, "http://localhost@evil.example": false, "http://evil.example": false, "http://localhost/x": false,
	} {
		if got := isLoopbackOrigin(origin); got != want {
			t.Errorf("isLoopbackOrigin(%q) = %v", origin, got)
		}
	}
}
