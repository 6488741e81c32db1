// Package firstbyte makes an HTTP/1 server wait for a fresh connection's
// first request as long as it waits for the next request of a kept-alive
// one.
//
// net/http applies ReadHeaderTimeout to a new connection from the moment
// it is accepted, so a connection that has not sent its first request
// within that time is closed without a word. HTTP clients dial ahead:
// Go's transport, for one, dials a connection for a request, gives that
// request a connection that became free meanwhile, and keeps the new one
// in its idle pool, unused. When the server closes it as the client
// sends a POST on it, the POST fails with "EOF", "connection reset by
// peer" or "http: server closed idle connection", and is not retried
// (POST is not idempotent). Listen's listener hands a connection to the
// server only once its first byte has arrived (or never, closing it after
// the idle timeout), so the header deadline starts with the request, as it
// does for every later request on the connection.
//
//	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
//	err := srv.Serve(firstbyte.Listen(ln, srv.IdleTimeout))
package firstbyte

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// Listen returns a listener that accepts from ln and returns each
// connection once its first byte has arrived; a connection that sends
// nothing within idle is closed. TLS connections are returned at once
// (the server's handshake has its own deadline). Closing the listener
// closes ln and the connections still waiting.
func Listen(ln net.Listener, idle time.Duration) net.Listener {
	l := &listener{Listener: ln, idle: idle, ready: make(chan net.Conn), done: make(chan struct{}), waiting: map[net.Conn]struct{}{}}
	go l.accept()
	return l
}

type listener struct {
	net.Listener
	idle  time.Duration
	ready chan net.Conn
	done  chan struct{} // closed by Close

	mu      sync.Mutex
	err     error // the inner Accept's last error, once it gave up
	waiting map[net.Conn]struct{}
	closed  bool
}

// accept accepts from the inner listener until it fails for good.
func (l *listener) accept() {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(delay):
					continue
				case <-l.done:
				}
			}
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			l.Close()
			return
		}
		delay = 0
		if _, isTLS := c.(*tls.Conn); isTLS {
			l.handOn(c)
			continue
		}
		if !l.track(c) {
			c.Close()
			continue
		}
		go l.wait(c)
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// wait hands c on once its first byte has arrived.
func (l *listener) wait(c net.Conn) {
	var b [1]byte
	var n int
	var err error
	if l.idle > 0 {
		err = c.SetReadDeadline(time.Now().Add(l.idle))
	}
	if err == nil {
		n, err = c.Read(b[:])
	}
	if err == nil {
		err = c.SetReadDeadline(time.Time{})
	}
	if !l.untrack(c) {
		return // closed by Close
	}
	if err != nil || n == 0 {
		c.Close()
		return
	}
	l.handOn(&conn{Conn: c, first: b[0], have: true})
}

func (l *listener) handOn(c net.Conn) {
	select {
	case l.ready <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *listener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.waiting[c] = struct{}{}
	return true
}

func (l *listener) untrack(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.waiting[c]
	delete(l.waiting, c)
	return ok
}

// Accept returns the next connection whose first byte has arrived.
func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.err != nil {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

// Close closes the inner listener and the connections still waiting for
// their first byte.
func (l *listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	waiting := l.waiting
	l.waiting = map[net.Conn]struct{}{}
	l.mu.Unlock()
	close(l.done)
	err := l.Listener.Close()
	for c := range waiting {
		c.Close()
	}
	return err
}

// conn gives back the byte the listener read, then reads on.
type conn struct {
	net.Conn
	first byte
	have  bool
}

func (c *conn) Read(p []byte) (int, error) {
	if c.have && len(p) > 0 {
		p[0] = c.first
		c.have = false
		return 1, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite half-closes a TCP connection, which net/http does before it
// closes one whose request it did not read to the end.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
