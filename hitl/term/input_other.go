//go:build !unix

package term

import (
	"context"
	"os"
)

// input reads the terminal through a goroutine per read: a read the prompt
// gave up on is kept for the next prompt, since it cannot be interrupted
// on this platform.
type input struct {
	f       *os.File
	buf     []byte
	pending chan readResult
}

type readResult struct {
	b   []byte
	err error
}

func newInput(f *os.File, _ int) (*input, error) { return &input{f: f}, nil }

func (in *input) close() error { return nil }

func (in *input) readByte(ctx context.Context) (byte, error) {
	if len(in.buf) == 0 {
		if in.pending == nil {
			ch := make(chan readResult, 1)
			in.pending = ch
			go func() {
				b := make([]byte, 256)
				n, err := in.f.Read(b)
				ch <- readResult{b[:n], err}
			}()
		}
		select {
		case r := <-in.pending:
			in.pending = nil
			if len(r.b) == 0 {
				return 0, r.err
			}
			in.buf = r.b
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
	c := in.buf[0]
	in.buf = in.buf[1:]
	return c, nil
}

func (in *input) buffered() int { return len(in.buf) }

func (in *input) discard() { in.buf = in.buf[:0] }
