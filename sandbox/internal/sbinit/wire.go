package sbinit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The configuration travels in a format of the package's own rather than
// JSON: the init decodes it at the start of every sandboxed command, and
// encoding/json's first decoding (its reflection of the types, the code
// it touches) cost about a millisecond of that start. It is a sequence of
// fields in the order of Encode, each a number, a flag or a string;
// numbers and lengths are unsigned varints (zig-zag for signed ones),
// strings are a length and the bytes. Both ends are built from the same
// source, so there is no versioning beyond the leading magic.

const wireMagic = "lcpsb1"

// errTruncated is the error of a configuration that ends early.
var errTruncated = errors.New("the configuration is truncated")

type wireWriter struct{ b []byte }

func (w *wireWriter) uint(v uint64) {
	for v >= 0x80 {
		w.b = append(w.b, byte(v)|0x80)
		v >>= 7
	}
	w.b = append(w.b, byte(v))
}

func (w *wireWriter) int(v int64) { w.uint(uint64(v<<1) ^ uint64(v>>63)) }

func (w *wireWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *wireWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *wireWriter) strs(l []string) {
	w.bool(l != nil)
	w.uint(uint64(len(l)))
	for _, s := range l {
		w.str(s)
	}
}

type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *wireReader) uint() uint64 {
	var v uint64
	for i := 0; i < 10; i++ {
		if len(r.b) == 0 {
			r.fail(errTruncated)
			return 0
		}
		c := r.b[0]
		r.b = r.b[1:]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v
		}
	}
	r.fail(errors.New("the configuration holds a number too large"))
	return 0
}

func (r *wireReader) int() int64 {
	u := r.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// num reads a signed number that must fit an int.
func (r *wireReader) num() int {
	v := r.int()
	if int64(int(v)) != v {
		r.fail(errors.New("the configuration holds a number too large"))
		return 0
	}
	return int(v)
}

func (r *wireReader) bool() bool {
	if len(r.b) == 0 {
		r.fail(errTruncated)
		return false
	}
	c := r.b[0]
	r.b = r.b[1:]
	if c > 1 {
		r.fail(fmt.Errorf("the configuration holds %d where a flag belongs", c))
	}
	return c == 1
}

func (r *wireReader) str() string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *wireReader) strs() []string {
	present := r.bool()
	n := r.uint()
	if n > uint64(len(r.b)) { // each string takes at least a byte
		r.fail(errTruncated)
		return nil
	}
	if !present {
		if n != 0 {
			r.fail(errors.New("the configuration holds a list that is both absent and not empty"))
		}
		return nil
	}
	l := make([]string, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		l = append(l, r.str())
	}
	return l
}

// Encode returns the configuration in the init's format (DecodeConfig).
func (c *Config) Encode() []byte {
	w := &wireWriter{b: make([]byte, 0, 1024)}
	w.b = append(w.b, wireMagic...)
	w.str(c.Path)
	w.strs(c.Args)
	w.str(c.Dir)
	w.strs(c.Env)
	w.int(int64(c.Passthrough))
	w.int(int64(c.Status))
	w.bool(c.Mounts != nil)
	w.uint(uint64(len(c.Mounts)))
	for i := range c.Mounts {
		m := &c.Mounts[i]
		w.str(string(m.Kind))
		w.str(m.Dst)
		w.str(m.Src)
		w.int(int64(m.Fd))
		w.bool(m.File)
		w.bool(m.ReadOnly)
		w.bool(m.Optional)
		w.int(m.Size)
		w.uint(uint64(m.Mode))
		w.str(m.Target)
		w.str(m.Upper)
		w.int(int64(m.UpperFd))
		w.bool(m.Fallback)
	}
	w.bool(c.Network)
	w.int(c.Limits.Memory)
	w.int(int64(c.Limits.Processes))
	w.int(c.Limits.FileSize)
	w.int(int64(c.Limits.CPUTime))
	w.int(int64(c.Limits.OpenFiles))
	w.int(c.Limits.TmpSize)
	w.int(int64(c.Gate))
	w.bool(c.PidsGroup)
	w.bool(c.Egress != nil)
	if c.Egress != nil {
		w.int(int64(c.Egress.Port))
		w.int(int64(c.Egress.Fd))
	}
	w.bool(c.Seccomp)
	w.bool(c.Layer != nil)
	if c.Layer != nil {
		w.int(c.Layer.Size)
		w.int(c.Layer.Inodes)
		w.int(int64(c.Layer.Sock))
		w.bool(c.Layer.Refuse)
	}
	w.strs(c.ReadOnly)
	w.strs(c.ReadWrite)
	return w.b
}

// DecodeConfig decodes a configuration Encode made; anything else (a
// truncated or longer input, a flag that is not 0 or 1, a number out of
// range) is an error.
func DecodeConfig(raw []byte) (Config, error) {
	var c Config
	rest, ok := strings.CutPrefix(string(raw), wireMagic)
	if !ok {
		return c, errors.New("the configuration is not in the init's format")
	}
	r := &wireReader{b: raw[len(raw)-len(rest):]}
	c.Path = r.str()
	c.Args = r.strs()
	c.Dir = r.str()
	c.Env = r.strs()
	c.Passthrough = r.num()
	c.Status = r.num()
	present := r.bool()
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
	}
	if present && r.err == nil {
		c.Mounts = make([]Mount, 0, n)
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		var m Mount
		m.Kind = MountKind(r.str())
		m.Dst = r.str()
		m.Src = r.str()
		m.Fd = r.num()
		m.File = r.bool()
		m.ReadOnly = r.bool()
		m.Optional = r.bool()
		m.Size = r.int()
		mode := r.uint()
		if mode > 1<<32-1 {
			r.fail(errors.New("the configuration holds a mode too large"))
		}
		m.Mode = uint32(mode)
		m.Target = r.str()
		m.Upper = r.str()
		m.UpperFd = r.num()
		m.Fallback = r.bool()
		c.Mounts = append(c.Mounts, m)
	}
	c.Network = r.bool()
	c.Limits.Memory = r.int()
	c.Limits.Processes = r.num()
	c.Limits.FileSize = r.int()
	c.Limits.CPUTime = time.Duration(r.int())
	c.Limits.OpenFiles = r.num()
	c.Limits.TmpSize = r.int()
	c.Gate = r.num()
	c.PidsGroup = r.bool()
	if r.bool() {
		c.Egress = &Egress{Port: r.num(), Fd: r.num()}
	}
	c.Seccomp = r.bool()
	if r.bool() {
		c.Layer = &Layer{Size: r.int(), Inodes: r.int(), Sock: r.num(), Refuse: r.bool()}
	}
	c.ReadOnly = r.strs()
	c.ReadWrite = r.strs()
	if r.err == nil && len(r.b) > 0 {
		r.fail(fmt.Errorf("the configuration has %d bytes past its end", len(r.b)))
	}
	if r.err != nil {
		return Config{}, r.err
	}
	return c, nil
}

// Line returns the status as one line of the status pipe (ParseStatus):
// its fields separated by tabs, the strings quoted.
func (m Status) Line() []byte {
	b := make([]byte, 0, 64+len(m.Err))
	b = append(b, m.Type...)
	b = append(b, '\t')
	b = strconv.AppendQuote(b, m.Step)
	b = append(b, '\t')
	b = strconv.AppendQuote(b, m.Err)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(m.Code), 10)
	b = append(b, '\t')
	b = strconv.AppendQuote(b, m.Signal)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(m.PeakProcs), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, m.MaxRSS, 10)
	return append(b, '\n')
}

// ParseStatus parses a line Status.Line made, without its newline.
func ParseStatus(line string) (Status, error) {
	f := strings.Split(line, "\t")
	if len(f) != 7 || f[0] == "" {
		return Status{}, fmt.Errorf("status line %q has %d fields", line, len(f))
	}
	m := Status{Type: f[0]}
	var errs [6]error
	m.Step, errs[0] = strconv.Unquote(f[1])
	m.Err, errs[1] = strconv.Unquote(f[2])
	m.Code, errs[2] = strconv.Atoi(f[3])
	m.Signal, errs[3] = strconv.Unquote(f[4])
	m.PeakProcs, errs[4] = strconv.Atoi(f[5])
	m.MaxRSS, errs[5] = strconv.ParseInt(f[6], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return Status{}, fmt.Errorf("status line %q: %w", line, err)
	}
	return m, nil
}
