package firstbyte

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
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
