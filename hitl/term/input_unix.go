//go:build unix

package term

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// input reads bytes from the terminal only while a prompt waits for them,
// and stops waiting the moment the prompt's context is cancelled. It polls
// the file together with a wake-up pipe instead of keeping a reader
// goroutine, so that nothing of ours reads the terminal between prompts
// (lcp chat reads its own lines from it) and a blocking descriptor such as
// os.Stdin can still be abandoned mid-read.
type input struct {
	f     *os.File
	fd    int
	wake  [2]*os.File // the wake-up pipe, whose descriptors are wakeR and wakeW
	wakeR int
	wakeW int
	buf   []byte
	tmp   [256]byte
}

// newInput reads f, whose descriptor is fd, blocking or not.
func newInput(f *os.File, fd int) (*input, error) {
	// os.Pipe sets close-on-exec atomically where the system can, so the
	// wake-up pipe never leaks into a tool's processes.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	in := &input{f: f, fd: fd, wake: [2]*os.File{r, w}}
	if in.wakeR, err = rawFD(r); err == nil {
		in.wakeW, err = rawFD(w)
	}
	if err == nil {
		err = unix.SetNonblock(in.wakeR, true)
	}
	if err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

func rawFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	err = rc.Control(func(u uintptr) { fd = int(u) })
	return fd, err
}

func (in *input) close() error {
	return errors.Join(in.wake[0].Close(), in.wake[1].Close())
}

// readByte returns the next byte, io.EOF at the end of the input, or the
// context's cause once ctx is cancelled.
func (in *input) readByte(ctx context.Context) (byte, error) {
	if len(in.buf) > 0 {
		c := in.buf[0]
		in.buf = in.buf[1:]
		return c, nil
	}
	if err := in.fill(ctx); err != nil {
		return 0, err
	}
	c := in.buf[0]
	in.buf = in.buf[1:]
	return c, nil
}

// buffered reports how many bytes were read but not yet consumed: the
// rest of an escape sequence that arrived in one piece.
func (in *input) buffered() int { return len(in.buf) }

func (in *input) fill(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _, _ = unix.Write(in.wakeW, []byte{0}) })
	defer stop()
	for {
		if ctx.Err() != nil {
			in.drainWake()
			return context.Cause(ctx)
		}
		fds := []unix.PollFd{{Fd: int32(in.fd), Events: unix.POLLIN}, {Fd: int32(in.wakeR), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		if fds[1].Revents != 0 {
			in.drainWake() // a cancelled context's wake-up, maybe a stale one
			continue
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(in.fd, in.tmp[:])
		switch {
		case n > 0:
			in.buf = append(in.buf[:0], in.tmp[:n]...)
			return nil
		case err == nil:
			return io.EOF
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EIO):
			// A terminal whose other side went away: the end of input.
			return io.EOF
		}
		return err
	}
}

func (in *input) drainWake() {
	var b [16]byte
	for {
		if n, _ := unix.Read(in.wakeR, b[:]); n <= 0 {
			return
		}
	}
}

// discard drops whatever was typed before the prompt appeared, so that
// keys pressed earlier can never answer it.
func (in *input) discard() {
	in.buf = in.buf[:0]
	for {
		fds := []unix.PollFd{{Fd: int32(in.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil || n == 0 || fds[0].Revents&unix.POLLIN == 0 {
			return
		}
		if m, _ := unix.Read(in.fd, in.tmp[:]); m <= 0 {
			return
		}
	}
}
