package worker

import _ "embed"

// workerSource is the worker program. It is sent to the interpreter as the
// first frame of the request pipe, so nothing is written to disk.
//
//go:embed lcp_worker.py
var workerSource []byte

// bootstrap is passed with python -I -c (see workerCommand). It must stay valid in old Pythons
// (even 2.7) so that a too-old interpreter answers with its version instead
// of a syntax error: it announces the version and stops, or reads the
// program from fd 3 (its source, then optionally its compiled code from an
// earlier worker of the same interpreter, which saves compiling it again),
// and runs its main().
const bootstrap = `import os, sys, struct, zlib
def _rd(n):
    b = b''
    while len(b) < n:
        c = os.read(3, n - len(b))
        if not c:
            os._exit(70)
        b += c
    return b
if sys.version_info < (3, 9):
    m = ('{"type":"hello","protocol":2,"python":"%d.%d.%d","error":"python too old"}' % tuple(sys.version_info[:3])).encode('ascii')
    os.write(4, struct.pack('>4sII', b'LCP2', len(m), zlib.crc32(m) & 0xffffffff) + m)
    os._exit(3)
_s = _rd(struct.unpack('>I', _rd(4))[0])
_m = _rd(struct.unpack('>I', _rd(4))[0])
_c = None
if _m:
    import marshal
    from importlib.util import MAGIC_NUMBER
    if _m[:len(MAGIC_NUMBER)] == MAGIC_NUMBER:
        try:
            _c = marshal.loads(_m[len(MAGIC_NUMBER):])
        except Exception:
            _c = None
if _c is None:
    _c = compile(_s, '<lcp-worker>', 'exec')
_g = {'__name__': 'lcp_worker', '__builtins__': __builtins__, '_LCP_CODE': _c}
del _s, _m
exec(_c, _g)
_g['main']()
`
