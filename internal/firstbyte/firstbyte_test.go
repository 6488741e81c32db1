package firstbyte

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const headerTimeout = 50 * time.Millisecond

// serve runs an HTTP server with a short ReadHeaderTimeout on a loopback
// listener, wrapped by Listen when fixed, and returns its address.
func serve(t *testing.T, fixed bool) (addr string, ln net.Listener) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = inner
	if fixed {
		ln = Listen(inner, 2*time.Minute)
	}
	srv := &http.Server{ReadHeaderTimeout: headerTimeout, IdleTimeout: 2 * time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Write(append([]byte("got "), b...))
		})}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return inner.Addr().String(), ln
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer waits for the server to close c (a hang detector only).
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	if _, err := io.Copy(io.Discard, c); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("waiting for the server to close the connection: %v", err)
	}
}

func post(t *testing.T, c net.Conn) (string, error) {
	t.Helper()
	req := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
	if _, err := io.WriteString(c, req); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestFreshConnectionWaitsLikeAnIdleOne: a connection dialled ahead and
// used only later (as HTTP clients' pools do) is served. Without Listen,
// net/http closes such a connection once ReadHeaderTimeout has passed,
// and the request sent on it fails.
func TestFreshConnectionWaitsLikeAnIdleOne(t *testing.T) {
	plainAddr, _ := serve(t, false)
	fixedAddr, _ := serve(t, true)
	fresh := dial(t, fixedAddr)
	control := dial(t, plainAddr)
	// The control connection, dialled later, is closed by its server
	// for sending nothing within the header timeout: by then the fresh
	// one would have been too.
	closedByServer(t, control)
	if _, err := post(t, control); err == nil {
		t.Fatal("the plain server answered on a connection it had closed")
	}
	got, err := post(t, fresh)
	if err != nil || got != "got hello" {
		t.Fatalf("a fresh connection used after the header timeout: %q, %v", got, err)
	}
	// The next request on it is served as usual.
	if got, err := post(t, fresh); err != nil || got != "got hello" {
		t.Fatalf("second request: %q, %v", got, err)
	}
}

// TestSilentConnectionClosedAfterIdle: a connection that never sends is
// closed after the idle time, and Close closes those still waiting.
func TestSilentConnectionClosedAfterIdle(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(inner, 100*time.Millisecond)
	defer ln.Close()
	closedByServer(t, dial(t, inner.Addr().String()))

	inner2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln2 := Listen(inner2, 2*time.Minute)
	c := dial(t, inner2.Addr().String())
	// Wait until the listener holds the connection, then close it.
	l2 := ln2.(*listener)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		l2.mu.Lock()
		n := len(l2.waiting)
		l2.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener never took the connection")
		}
	}
	accepted := make(chan error, 1)
	go func() {
		_, err := ln2.Accept()
		accepted <- err
	}()
	if err := ln2.Close(); err != nil {
		t.Fatal(err)
	}
	closedByServer(t, c)
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// TestEdgeCases: what the server sees of a connection, by what its client
// sends. Each case runs against an HTTP server behind Listen with a short
// header timeout, so a case that the listener held for ever, or handed on
// without its first byte, shows as a hang (detected after 2 min) or as a
// wrong answer.
func TestEdgeCases(t *testing.T) {
	const req = "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello"
	for _, tc := range []struct {
		name string
		// send writes to the connection; close says whether the client
		// then half-closes its side.
		send  func(t *testing.T, c net.Conn)
		close bool
		// want is the start of what the client reads until the server
		// closes; "" means nothing at all.
		want string
	}{
		{name: "nothing, then close", close: true, send: func(*testing.T, net.Conn) {}},
		// From the first byte on, the header timeout applies: the
		// connection is not held for the idle time.
		{name: "one byte, then nothing", send: func(t *testing.T, c net.Conn) { write(t, c, "P") }, want: "HTTP/1.1 400"},
		{name: "one byte, then close", close: true, send: func(t *testing.T, c net.Conn) { write(t, c, "P") }, want: "HTTP/1.1 400"},
		{name: "garbage", send: func(t *testing.T, c net.Conn) { write(t, c, "\x16\x03\x01\x00\x05hello\r\n\r\n") }, want: "HTTP/1.1 400"},
		{name: "a request byte by byte", want: "HTTP/1.1 200", send: func(t *testing.T, c net.Conn) {
			for i := range len(req) {
				write(t, c, req[i:i+1])
			}
		}},
		{name: "a request in one write", want: "HTTP/1.1 200", send: func(t *testing.T, c net.Conn) { write(t, c, req) }},
		{name: "the first byte alone, then the rest", want: "HTTP/1.1 200", send: func(t *testing.T, c net.Conn) {
			write(t, c, req[:1])
			write(t, c, req[1:])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := serve(t, true)
			c := dial(t, addr)
			tc.send(t, c)
			if tc.close {
				if err := c.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			c.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a hang detector
			got, err := io.ReadAll(c)
			if err != nil && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("reading until the server closes: %v (read %q)", err, got)
			}
			if tc.want == "" && len(got) != 0 || !strings.HasPrefix(string(got), tc.want) {
				t.Errorf("the server answered %q, want %q", got, tc.want)
			}
			if strings.HasPrefix(tc.want, "HTTP/1.1 200") && !strings.HasSuffix(string(got), "got hello") {
				t.Errorf("the handler read %q, want the whole body", got)
			}
		})
	}
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// TestTLSConnectionsPassAtOnce: a TLS listener's connections are handed
// to the server at once; their handshake has its own deadline in
// net/http.
func TestTLSConnectionsPassAtOnce(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(append([]byte("got "), b...))
	}))
	srv.StartTLS() // sets up the certificate and srv.Listener as a TLS listener
	srv.Listener.Close()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(tls.NewListener(inner, srv.TLS), 2*time.Minute)
	hs := &http.Server{Handler: srv.Config.Handler, ReadHeaderTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	defer func() {
		hs.Close()
		<-done
	}()
	client := srv.Client()
	client.Timeout = 2 * time.Minute // a hang detector
	resp, err := client.Post("https://"+inner.Addr().String()+"/", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "got hello" {
		t.Fatalf("over TLS: %q, %v", b, err)
	}
}
