package sbinit

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// startEgress listens on the run's loopback and hands every connection
// over to lcp on the socket e.Fd. It uses the system calls directly: the
// net package would make the init wait for its initializers (see
// docs/decisions.md, the init's start).
func startEgress(e *Egress) error {
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("listen for the proxy inside the sandbox: %w", err)
	}
	_ = unix.SetsockoptInt(l, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	addr := &unix.SockaddrInet4{Port: e.Port, Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(l, addr); err != nil {
		_ = unix.Close(l)
		return fmt.Errorf("listen for the proxy inside the sandbox: bind 127.0.0.1:%d: %w", e.Port, err)
	}
	if err := unix.Listen(l, unix.SOMAXCONN); err != nil {
		_ = unix.Close(l)
		return fmt.Errorf("listen for the proxy inside the sandbox: %w", err)
	}
	go acceptLoop(l, e.Fd)
	return nil
}

// acceptLoop accepts connections on the listening socket l (blocking, on
// a thread of its own) and hands each over to lcp on sock. It ends when
// the listener is unusable; a transient failure (too many descriptors)
// is retried a little later.
func acceptLoop(l, sock int) {
	for {
		c, _, err := unix.Accept4(l, unix.SOCK_CLOEXEC)
		switch {
		case err == nil:
			handOver(sock, c)
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.ECONNABORTED), errors.Is(err, unix.EPROTO):
		case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE), errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.ENOMEM):
			time.Sleep(10 * time.Millisecond)
		default:
			return
		}
	}
}

// handOver sends the connection c to lcp and closes the init's copy; a
// connection that cannot be handed over is closed (it fails at once).
func handOver(sock, c int) {
	defer unix.Close(c)
	_ = unix.Sendmsg(sock, []byte{0}, unix.UnixRights(c), nil, 0)
}
