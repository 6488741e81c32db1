"""The Python side of the lcp worker runtime (SPEC.md sections 7 and 8).

The Go engine starts this program with ``python3 -c BOOTSTRAP`` (see
bootstrap.go).  The bootstrap checks the interpreter version, reads this
source as the first frame of the request pipe and calls :func:`main`.

Process layout, from the engine's point of view::

    engine --fork/exec--> guardian (own process group, parent-death SIGTERM,
                          child subreaper)
                              \\--fork--> worker (own process group,
                                          parent-death SIGKILL) --> tool children

The guardian does nothing but wait.  When the worker dies, for whatever reason
(os._exit, a segfault, the OOM killer, the engine killing it), the guardian
kills the worker's process group and every process left below itself (it is a
child subreaper, so even children that called setsid end up there), reports the
worker's exit status on fd 5 and exits.  When the engine dies, the kernel sends
the guardian SIGTERM and it does the same.

Pipes (never stdin/stdout, so a tool's print() or a write to fd 1/2 cannot
corrupt the protocol):

    fd 3  engine -> worker   requests
    fd 4  worker -> engine   replies, captured output, host requests
    fd 5  guardian -> engine one JSON line: the worker's exit status

Every message is a frame: a 4-byte big-endian length, then a JSON header
object, optionally followed by a newline and a raw payload (JSON text or
UTF-8 output) that is not re-encoded.

Standard library only; Python 3.9 or newer.
"""

import base64
import io
import itertools
import json
import math
import os
import queue
import struct
import sys
import threading
import time
import traceback
import types

PROTOCOL_VERSION = 1

# Frames larger than this from the engine are a protocol violation.
MAX_FRAME = 1 << 30

HIDDEN_INJECTED = (
    "tool_context",
    "lollms_client_instance",
    "discussion_instance",
    "user_interaction_handler",
)

MODULE_PREFIX = "lollms_client.tools_bindings.lcp.persistent_"

_SELF_FILE = sys._getframe().f_code.co_filename

_LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


class CallCancelled(BaseException):
    """Raised inside a tool's thread when the engine cancels the call."""


# ---------------------------------------------------------------------------
# Framing


def read_exact(fd, n):
    """Read exactly n bytes from a raw fd; None on EOF."""
    chunks = []
    while n > 0:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_frame(reader):
    """Read one frame from a binary file object; None on EOF."""
    head = reader.read(4)
    if not head or len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    if n > MAX_FRAME:
        raise ValueError("frame of %d bytes exceeds the limit" % n)
    data = reader.read(n)
    if data is None or len(data) < n:
        return None
    return data


def split_frame(data):
    """Split a frame into its JSON header (a dict) and its raw payload."""
    i = data.find(b"\n")
    if i < 0:
        return json.loads(data), b""
    return json.loads(data[:i]), data[i + 1:]


def encode_frame(header, payload=None):
    h = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if payload is None:
        body = h
    else:
        body = b"".join((h, b"\n", payload))
    return struct.pack(">I", len(body)) + body


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# ---------------------------------------------------------------------------
# JSON conversion (SPEC section 16, "Conversion of values JSON cannot carry")

_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class ConversionError(Exception):
    """A tool's value could not be converted to JSON at all."""


def to_json(value):
    """Convert a tool's return value to UTF-8 JSON bytes.

    Returns (json_bytes, notes) where notes is a list of
    {"path", "from", "to"} dicts (JSON pointers into the value) for lossy
    conversions, or None.
    """
    notes = None
    try:
        text = _encoder.encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        notes = []
        try:
            converted = _convert(value, "", notes, set())
        except RecursionError:
            raise ConversionError("the value is nested too deeply to convert to JSON")
        text = _encoder.encode(converted)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: let JSON escapes carry them.
        data = _ascii_encoder.encode(json.loads(text)).encode("ascii")
    return data, (notes or None)


def _pointer_token(key):
    return key.replace("~", "~0").replace("/", "~1")


def _json_key(k):
    if isinstance(k, str):
        return str.__str__(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    if isinstance(k, float):
        if math.isnan(k):
            return "NaN"
        if math.isinf(k):
            return "Infinity" if k > 0 else "-Infinity"
        return float.__repr__(k)
    return _safe_repr(k)


def _safe_repr(v):
    try:
        return repr(v)
    except Exception:
        return "<unrepresentable %s>" % type(v).__name__


def _sorted_set(s):
    try:
        return sorted(s)
    except Exception:
        pass
    try:
        return sorted(s, key=_safe_repr)
    except Exception:
        return list(s)


def _convert(v, path, notes, active):
    if v is None or v is True or v is False:
        return v
    t = type(v)
    if t is str or t is int:
        return v
    if t is float or isinstance(v, float):
        f = float(v)
        if math.isfinite(f):
            return f
        return repr(f)
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, (bytes, bytearray)):
        notes.append({"path": path, "from": "bytes", "to": "base64"})
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, (dict, list, tuple, set, frozenset)):
        ident = id(v)
        if ident in active:
            return "<circular reference>"
        active.add(ident)
        try:
            if isinstance(v, dict):
                out = {}
                for k, x in list(v.items()):
                    key = _json_key(k)
                    out[key] = _convert(x, path + "/" + _pointer_token(key), notes, active)
                return out
            items = _sorted_set(v) if isinstance(v, (set, frozenset)) else v
            return [_convert(x, path + "/" + str(i), notes, active) for i, x in enumerate(items)]
        finally:
            active.discard(ident)
    return _safe_repr(v)


# ---------------------------------------------------------------------------
# Exceptions


def _internal_frame(filename):
    return filename == _SELF_FILE or filename.startswith("<frozen importlib")


def describe_exception(e):
    """{"type", "message", "traceback"} of an exception, worker frames removed."""
    try:
        message = str(e)
    except BaseException:
        message = "<str() of the exception failed>"
    tb = e.__traceback__
    while tb is not None and _internal_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    try:
        if tb is None:
            text = "Traceback (most recent call last):\n" + "".join(
                traceback.format_exception_only(type(e), e))
        else:
            text = "".join(traceback.format_exception(type(e), e, tb))
    except BaseException:
        text = "Traceback (most recent call last):\n%s: %s\n" % (type(e).__name__, message)
    return {"type": type(e).__name__, "message": message, "traceback": text}


# ---------------------------------------------------------------------------
# Calling conventions (SPEC section 7, steps 6 and 7)


class CallPlan(object):
    """How to call one tool function: which names it takes and how."""

    __slots__ = ("posonly", "named", "var_kw", "inject", "unknown")

    def __init__(self, fn):
        import inspect

        self.posonly = []
        self.named = set()
        self.var_kw = False
        self.unknown = False
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            self.unknown = True
            self.inject = ()
            return
        P = inspect.Parameter
        for p in sig.parameters.values():
            if p.kind == P.POSITIONAL_ONLY:
                self.posonly.append(p.name)
                self.named.add(p.name)
            elif p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
                self.named.add(p.name)
            elif p.kind == P.VAR_KEYWORD:
                self.var_kw = True
        self.inject = tuple(n for n in HIDDEN_INJECTED if self.var_kw or n in self.named)

    def bind(self, args, injected):
        """Positional and keyword arguments for a call.

        Unknown names are dropped unless the function has **kwargs; the host
        objects are injected only when declared (or **kwargs); positional-only
        parameters are passed positionally up to the first missing one.
        """
        if self.unknown:
            return [], dict(args)
        if self.var_kw:
            kwargs = dict(args)
        else:
            named = self.named
            kwargs = {k: v for k, v in args.items() if k in named}
        for name in self.inject:
            kwargs[name] = injected(name)
        positional = []
        for name in self.posonly:
            if name not in kwargs:
                break
            positional.append(kwargs.pop(name))
        return positional, kwargs


def accepts_positional(fn):
    """Whether fn can take one positional argument (init_tools_library rule)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    P = inspect.Parameter
    return any(p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL)
               for p in sig.parameters.values())


def _async_raise(tid, exc_type):
    """Schedule exc_type in thread tid (None clears a pending one)."""
    import ctypes

    obj = ctypes.py_object(exc_type) if exc_type is not None else None
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), obj)


# ---------------------------------------------------------------------------
# Output capture


def _thread_call():
    return getattr(threading.current_thread(), "_lcp_call", None)


_orig_thread_start = threading.Thread.start


def _start_with_call(self, *a, **kw):
    # Threads a tool starts inherit its call, so their output and handler
    # requests are attributed to it.
    self._lcp_call = _thread_call()
    return _orig_thread_start(self, *a, **kw)


class _ByteSink(object):
    """sys.stdout.buffer of a routed stream."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, b):
        self._stream.write(bytes(b).decode("utf-8", "replace"))
        return len(b)

    def flush(self):
        pass

    def fileno(self):
        return self._stream.fileno()

    def isatty(self):
        return False

    def writable(self):
        return True


class RoutedStream(io.TextIOBase):
    """A sys.stdout / sys.stderr that sends each call's writes to the engine.

    Writes from a thread that belongs to a running call are captured for that
    call (up to the worker's per-call limit); anything else goes to the
    worker's original fd, which the engine drains as unattributed output.
    """

    def __init__(self, worker, name, fd):
        super().__init__()
        self._worker = worker
        self._name = name
        self._fd = fd
        self.buffer = _ByteSink(self)

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def flush(self):
        # print(..., flush=True) delivers at once instead of with the next
        # periodic flush.
        call = _thread_call()
        if call is not None and not call.finished:
            call.flush_output()

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        call = _thread_call()
        if call is not None and not call.finished:
            call.capture(self._name, s)
        else:
            try:
                write_all(self._fd, s.encode("utf-8", "replace"))
            except OSError:
                pass
        return len(s)


# ---------------------------------------------------------------------------
# Host proxies


class ConfirmHandlerProxy(object):
    """confirm_handler(source, script_label, argv=None) -> (decision, reason)."""

    def __init__(self, worker):
        self._worker = worker

    def __call__(self, source, script_label, argv=None):
        call = self._worker.current_call()
        if call is None:
            return ("reject", "No tool call is running to ask the host for confirmation.")
        answer = self._worker.host_request(call, {
            "kind": "confirm",
            "source": str(source),
            "script_label": str(script_label),
            "argv": None if argv is None else [str(a) for a in argv],
        })
        if not isinstance(answer, dict):
            return ("reject", "The host gave no decision.")
        return (str(answer.get("decision") or "reject"), str(answer.get("reason") or ""))

    def __repr__(self):
        return "<lcp confirm_handler proxy>"


class InteractionHandlerProxy(object):
    """user_interaction_handler(request_dict) -> str or None."""

    def __init__(self, worker):
        self._worker = worker

    def __call__(self, request):
        call = self._worker.current_call()
        if call is None:
            return None
        data, _ = to_json(request)
        answer = self._worker.host_request(call, {"kind": "interact"}, payload=data)
        if answer is None:
            return None
        return str(answer)

    def __repr__(self):
        return "<lcp user_interaction_handler proxy>"


def _absent(modality, what):
    def method(self, *args, **kwargs):
        raise RuntimeError("%s is not available: the host has no %s binding." % (what, modality))
    method.__name__ = what
    return method


class _Bound(object):
    def __init__(self, worker, call):
        self._worker = worker
        self._call = call

    def _current(self):
        return self._worker.current_call() or self._call


class LLMProxy(_Bound):
    """client.llm when the host has an LLM."""

    def generate_text(self, prompt, n_predict=None, **kwargs):
        options = {}
        if n_predict is not None:
            options["n_predict"] = n_predict
        for k, v in kwargs.items():
            if not callable(v):
                options[k] = v
        opts, _ = to_json(options)
        answer = self._worker.host_request(self._current(), {
            "kind": "generate", "prompt": str(prompt)}, payload=opts)
        if not isinstance(answer, dict) or answer.get("error") is not None:
            raise RuntimeError((answer or {}).get("error") if isinstance(answer, dict) else "generation failed")
        return answer.get("text", "")

    generate = generate_text

    def __repr__(self):
        return "<lcp llm proxy>"


class ToolsProxy(_Bound):
    """client.tools: the host's whole tool inventory."""

    def execute_tool(self, name, params=None, **kwargs):
        data, _ = to_json(params if params is not None else {})
        answer = self._worker.host_request(self._current(), {
            "kind": "execute_tool", "name": str(name)}, payload=data)
        return answer

    def __repr__(self):
        return "<lcp tools proxy>"


class ClientProxy(_Bound):
    """lollms_client_instance: a proxy of the host's client."""

    def __init__(self, worker, call, has_llm):
        _Bound.__init__(self, worker, call)
        self.llm = LLMProxy(worker, call) if has_llm else None
        self.tti = None
        self.tts = None
        self.stt = None
        self.ttv = None
        self.ttm = None
        self.rag = None
        self.tools = ToolsProxy(worker, call)

    def generate_text(self, prompt, n_predict=None, **kwargs):
        if self.llm is None:
            raise RuntimeError("Text generation is not available: the host has no LLM binding.")
        return self.llm.generate_text(prompt, n_predict=n_predict, **kwargs)

    generate = generate_text

    generate_image = _absent("tti", "generate_image")
    edit_image = _absent("tti", "edit_image")
    generate_omni = _absent("tti", "generate_omni")
    generate_audio = _absent("tts", "generate_audio")
    transcribe_audio = _absent("stt", "transcribe_audio")
    generate_video = _absent("ttv", "generate_video")
    generate_music = _absent("ttm", "generate_music")
    generate_song = _absent("ttm", "generate_song")
    generate_song_from_lyrics = _absent("ttm", "generate_song_from_lyrics")
    query_rag = _absent("rag", "query_rag")
    add_document_to_rag = _absent("rag", "add_document_to_rag")

    def __repr__(self):
        return "<lcp lollms_client_instance proxy>"


class DiscussionProxy(_Bound):
    """discussion_instance: the host's conversation (messages readable)."""

    @property
    def messages(self):
        return self._worker.host_request(self._current(), {"kind": "discussion"})

    def get_messages(self):
        return self.messages

    def __repr__(self):
        return "<lcp discussion_instance proxy>"


# ---------------------------------------------------------------------------
# Calls


class _Waiter(object):
    __slots__ = ("event", "value", "cancelled")

    def __init__(self):
        self.event = threading.Event()
        self.value = None
        self.cancelled = False


class Call(object):
    """One call in flight in the worker."""

    def __init__(self, worker, header, payload):
        self.worker = worker
        self.id = header["id"]
        self.cid = header.get("cid", "")
        self.op = header.get("type", "call")
        self.fn = header.get("fn", "")
        h = header.get("h") or [False, False]
        self.flags = (bool(h[0]), bool(h[1]))
        self.has_llm = bool(header.get("llm"))
        self.has_discussion = bool(header.get("disc"))
        self.payload = payload
        self.lock = threading.Lock()
        self.finished = False
        self.cancel_requested = False
        self.tid = None
        self.loop = None
        self.task = None
        self.waiters = set()
        self.out_lock = threading.Lock()
        self.out_used = {"stdout": 0, "stderr": 0}
        self.out_dropped = {"stdout": 0, "stderr": 0}
        self.out_buf = {"stdout": [], "stderr": []}
        self.out_buflen = 0

    def capture(self, stream, s):
        limit = self.worker.output_limit
        flush = False
        with self.out_lock:
            room = limit - self.out_used[stream]
            if room <= 0:
                self.out_dropped[stream] += len(s)
                return
            if len(s) > room:
                self.out_dropped[stream] += len(s) - room
                s = s[:room]
            self.out_used[stream] += len(s)
            self.out_buf[stream].append(s)
            self.out_buflen += len(s)
            if self.out_buflen >= 8192:
                flush = True
        if flush:
            self.flush_output()
        else:
            self.worker.schedule_flush(self)

    def flush_output(self, final=False):
        with self.out_lock:
            chunks = []
            for stream in ("stdout", "stderr"):
                buf = self.out_buf[stream]
                if buf:
                    chunks.append((stream, "".join(buf), 0))
                    self.out_buf[stream] = []
                if final and self.out_dropped[stream]:
                    chunks.append((stream, "", self.out_dropped[stream]))
                    self.out_dropped[stream] = 0
            self.out_buflen = 0
            # Sending under out_lock keeps a call's chunks in order.
            for stream, text, dropped in chunks:
                header = {"type": "output", "id": self.id, "cid": self.cid, "stream": stream}
                if dropped:
                    header["dropped"] = dropped
                self.worker.send(header, text.encode("utf-8", "replace"))


# ---------------------------------------------------------------------------
# The worker


class Worker(object):
    """Serves one library in one workspace over the request/reply fds."""

    def __init__(self, rfd, wfd, init, out_fd=1, err_fd=2, exit_on_eof=True):
        lib = init.get("library") or {}
        self.path = lib.get("path", "")
        self.stem = lib.get("stem") or os.path.splitext(os.path.basename(self.path))[0]
        self.code = lib.get("code") or ""
        self.output_limit = int(init.get("output_limit") or (1 << 20))
        self.max_result = int(init.get("max_result") or (128 << 20))
        self.rfd = rfd
        self.wfd = wfd
        self.pid = os.getpid()
        self.reader = os.fdopen(rfd, "rb", buffering=1 << 16, closefd=False)
        self.wlock = threading.Lock()
        self.calls = {}
        self.calls_lock = threading.Lock()
        self.module = None
        self.load_lock = threading.Lock()
        self.flags_lock = threading.Lock()
        self.applied_flags = (False, False)
        self.plans = {}
        self.rids = itertools.count(1)
        self.waiters = {}
        # Leader/follower threads: one thread at a time reads the request
        # pipe; when it reads a call it hands the reading over to an idle
        # thread and runs the call itself, so a call costs no thread switch.
        self.read_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.idle_readers = 0
        self.max_idle_readers = 8
        self.exit_on_eof = exit_on_eof
        self.confirm_proxy = ConfirmHandlerProxy(self)
        self.interact_proxy = InteractionHandlerProxy(self)
        self.out_fd = out_fd
        self.err_fd = err_fd
        self._flush_set = set()
        self._flush_lock = threading.Lock()
        self._flush_event = threading.Event()

    # -- sending -----------------------------------------------------------

    def send(self, header, payload=None):
        if os.getpid() != self.pid:
            # A child a tool forked without exec: it must not speak for us.
            return
        data = encode_frame(header, payload)
        with self.wlock:
            try:
                write_all(self.wfd, data)
            except OSError:
                # The engine is gone (or a tool closed our pipe): nothing
                # left to serve.
                os._exit(0)

    def fatal(self, message):
        """Report an internal failure and exit (the engine sees a crash)."""
        try:
            with self.wlock:
                write_all(self.wfd, encode_frame({"type": "fatal", "error": message}))
        except BaseException:
            pass
        os._exit(70)

    def log(self, level, msg):
        self.send({"type": "log", "level": level, "msg": msg})

    def schedule_flush(self, call):
        with self._flush_lock:
            self._flush_set.add(call)
        self._flush_event.set()

    def _flusher(self):
        while True:
            self._flush_event.wait()
            time.sleep(0.05)
            self._flush_event.clear()
            with self._flush_lock:
                calls = list(self._flush_set)
                self._flush_set.clear()
            for call in calls:
                if not call.finished:
                    try:
                        call.flush_output()
                    except Exception:
                        pass

    # -- serving -----------------------------------------------------------

    def install_process_hooks(self):
        """Keep the protocol pipes out of the tools' child processes."""
        for fd in (self.rfd, self.wfd):
            try:
                os.set_inheritable(fd, False)
            except OSError:
                pass
        rfd, wfd = self.rfd, self.wfd

        def after_fork_in_child():
            for fd in (rfd, wfd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            # The child cannot speak the protocol: what it prints goes to
            # fds 1 and 2, which the engine drains.
            sys.stdout = sys.__stdout__
            sys.stderr = sys.__stderr__

        os.register_at_fork(after_in_child=after_fork_in_child)

    def install_streams(self):
        saved_out = os.dup(self.out_fd)
        saved_err = os.dup(self.err_fd)
        self.saved_out, self.saved_err = saved_out, saved_err
        sys.stdout = RoutedStream(self, "stdout", saved_out)
        sys.stderr = RoutedStream(self, "stderr", saved_err)
        threading.Thread.start = _start_with_call

    def serve(self):
        threading.Thread(target=self._flusher, daemon=True, name="lcp-flush").start()
        self.send({"type": "hello", "protocol": PROTOCOL_VERSION,
                   "python": "%d.%d.%d" % sys.version_info[:3],
                   "pid": os.getpid()})
        code = getattr(self, "code_frame", None)
        if code:
            self.send({"type": "code"}, code)
            self.code_frame = None
        self._reader_loop(permanent=True)

    def _reader_loop(self, permanent=False):
        """Read requests; run each call read in this thread."""
        while True:
            with self.state_lock:
                if not permanent and self.idle_readers >= self.max_idle_readers:
                    return
                self.idle_readers += 1
            self.read_lock.acquire()
            try:
                with self.state_lock:
                    self.idle_readers -= 1
                call = self._read_call()
            except BaseException:
                # The worker itself is broken: it cannot serve any more.
                self.fatal(traceback.format_exc())
            finally:
                self.read_lock.release()
            if call is None:
                # The engine closed the pipe (or is gone): stop now, without
                # waiting for tool threads.
                if self.exit_on_eof:
                    os._exit(0)
                return
            with self.state_lock:
                need_reader = self.idle_readers == 0
            if need_reader:
                threading.Thread(target=self._reader_loop, daemon=True, name="lcp-call").start()
            try:
                self._run_call(call)
            except BaseException:
                pass

    def _read_call(self):
        """Read frames until a call (returned) or the end of the pipe (None)."""
        while True:
            try:
                data = read_frame(self.reader)
            except KeyboardInterrupt:
                continue
            if data is None:
                return None
            header, payload = split_frame(data)
            call = self.dispatch(header, payload)
            if call is not None:
                return call

    def dispatch(self, header, payload):
        """Handle a request; a call is registered and returned to be run."""
        kind = header.get("type")
        if kind in ("call", "load"):
            call = Call(self, header, payload)
            with self.calls_lock:
                self.calls[call.id] = call
            return call
        if kind == "cancel":
            self.cancel(header.get("id"))
        elif kind == "answer":
            w = self.waiters.pop(header.get("rid"), None)
            if w is not None:
                try:
                    w.value = json.loads(payload) if payload else None
                except ValueError:
                    w.value = None
                w.event.set()
        elif kind == "handlers":
            flags = (bool(header.get("confirm")), bool(header.get("interact")))
            threading.Thread(target=self._apply_flags_safely, args=(flags,), daemon=True).start()
        else:
            self.log("warn", "unknown request type %r" % (kind,))
        return None

    def current_call(self):
        call = _thread_call()
        if call is not None and not call.finished:
            return call
        with self.calls_lock:
            if len(self.calls) == 1:
                return next(iter(self.calls.values()))
        return None

    def host_request(self, call, body, payload=None):
        """Ask the engine's host something on behalf of call; block for the answer."""
        w = _Waiter()
        with call.lock:
            if call.cancel_requested:
                raise CallCancelled()
            if call.finished:
                raise RuntimeError("the tool call that owns this request has already ended")
            call.waiters.add(w)
        if payload is not None and len(payload) > self.max_result:
            with call.lock:
                call.waiters.discard(w)
            raise ValueError("request of %d bytes is over the limit of %d bytes" % (len(payload), self.max_result))
        rid = next(self.rids)
        self.waiters[rid] = w
        header = {"type": "request", "id": call.id, "rid": rid}
        header.update(body)
        try:
            self.send(header, payload)
            w.event.wait()
        finally:
            self.waiters.pop(rid, None)
            with call.lock:
                call.waiters.discard(w)
        if w.cancelled:
            raise CallCancelled()
        return w.value

    def cancel(self, call_id):
        with self.calls_lock:
            call = self.calls.get(call_id)
        if call is None:
            return
        with call.lock:
            if call.finished or call.cancel_requested:
                return
            call.cancel_requested = True
            waiters = list(call.waiters)
            loop, task = call.loop, call.task
            if call.tid is not None:
                try:
                    _async_raise(call.tid, CallCancelled)
                except Exception:
                    pass
        for w in waiters:
            w.cancelled = True
            w.event.set()
        if loop is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass

    # -- running a call ----------------------------------------------------

    def _run_call(self, call):
        th = threading.current_thread()
        th._lcp_call = call
        result = None
        try:
            with call.lock:
                call.tid = threading.get_ident()
                skip = call.cancel_requested
            if not skip:
                result = self._execute(call)
        except CallCancelled:
            result = None
        except BaseException as e:
            result = {"internal": describe_exception(e)}
        self._finish(call, result)
        th._lcp_call = None

    def _finish(self, call, result):
        # A CallCancelled scheduled just before we mark the call finished may
        # fire anywhere in here; retry until the call is marked and nothing
        # is pending any more.
        while True:
            try:
                with call.lock:
                    call.finished = True
                    cancelled = call.cancel_requested
                    if cancelled and call.tid is not None:
                        _async_raise(call.tid, None)
                break
            except CallCancelled:
                continue
        with self.calls_lock:
            self.calls.pop(call.id, None)
        self._repair_std_fds()
        try:
            call.flush_output(final=True)
        except Exception:
            pass
        header = {"type": "result", "id": call.id}
        payload = None
        if not cancelled and result is not None and len(result) == 1 and "_value" in result:
            # The common case, without the JSON encoder.
            data = result["_value"]
            body = b'{"type":"result","id":%d}\n' % call.id
            with self.wlock:
                if os.getpid() == self.pid:
                    try:
                        head = struct.pack(">I", len(body) + len(data)) + body
                        if len(data) < 1 << 16:
                            write_all(self.wfd, head + data)
                        else:
                            # Do not copy a big value to prepend the header.
                            write_all(self.wfd, head)
                            write_all(self.wfd, data)
                    except OSError:
                        os._exit(0)
            return
        if cancelled:
            header["cancelled"] = True
        elif result is None:
            header["internal"] = {"type": "RuntimeError", "message": "call ended without a result",
                                  "traceback": ""}
        else:
            payload = result.pop("_value", None)
            header.update(result)
        self.send(header, payload)

    def _repair_std_fds(self):
        for fd, saved in ((1, getattr(self, "saved_out", None)), (2, getattr(self, "saved_err", None))):
            if saved is None:
                continue
            try:
                os.fstat(fd)
            except OSError:
                try:
                    os.dup2(saved, fd)
                except OSError:
                    pass

    def _execute(self, call):
        try:
            body = json.loads(call.payload) if call.payload else {}
        except ValueError as e:
            return {"internal": {"type": "ValueError", "message": "bad call payload: %s" % e,
                                 "traceback": ""}}
        args = body.get("args") or {}
        if not isinstance(args, dict):
            return {"internal": {"type": "TypeError", "message": "arguments must be a JSON object",
                                 "traceback": ""}}
        context = body.get("context")
        if context is None:
            context = {}
        mod, load_error, reloaded = self._ensure_loaded(call, body.get("config"))
        if load_error is not None:
            return {"load_error": load_error}
        if call.op == "load":
            names = [k for k, v in list(vars(mod).items())
                     if k.startswith("tool_") and callable(v)]
            return {"functions": names}
        if call.flags != self.applied_flags:
            self._apply_flags(call.flags)
        if call.flags[1]:
            hook = getattr(mod, "set_user_interaction_handler", None)
            if callable(hook):
                try:
                    hook(self.interact_proxy)
                except CallCancelled:
                    raise
                except BaseException as e:
                    return {"exception": describe_exception(e)}
        fn = getattr(mod, call.fn, None) if call.fn else None
        if fn is None or not callable(fn):
            return {"not_module_level": True}
        plan = self.plans.get(id(fn))
        if plan is None or plan[0] is not fn:
            plan = (fn, CallPlan(fn))
            self.plans[id(fn)] = plan
        plan = plan[1]

        def injected(name):
            if name == "tool_context":
                return context
            if name == "lollms_client_instance":
                return ClientProxy(self, call, call.has_llm)
            if name == "discussion_instance":
                return DiscussionProxy(self, call) if call.has_discussion else None
            return self.interact_proxy if call.flags[1] else None

        positional, kwargs = plan.bind(args, injected)
        try:
            value = fn(*positional, **kwargs)
            if _is_coroutine(value):
                value = self._run_coroutine(call, value)
        except BaseException as e:
            if call.cancel_requested:
                raise CallCancelled()
            return {"exception": describe_exception(e)}
        finally:
            positional = kwargs = None
        try:
            data, notes = to_json(value)
        except ConversionError as e:
            return {"exception": {"type": "ValueError", "message": str(e), "traceback": ""}}
        except MemoryError as e:
            return {"exception": describe_exception(e)}
        value = None
        if len(data) > self.max_result:
            return {"too_large": len(data)}
        out = {"_value": data}
        if notes:
            out["converted"] = notes
        return out

    def _run_coroutine(self, call, coro):
        import asyncio

        loop = asyncio.new_event_loop()
        try:
            asyncio.set_event_loop(loop)
            task = loop.create_task(coro)
            with call.lock:
                call.loop, call.task = loop, task
                cancel_now = call.cancel_requested
            if cancel_now:
                task.cancel()
            return loop.run_until_complete(task)
        finally:
            with call.lock:
                call.loop = call.task = None
            try:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
                if hasattr(loop, "shutdown_default_executor"):
                    loop.run_until_complete(loop.shutdown_default_executor())
            except Exception:
                pass
            finally:
                asyncio.set_event_loop(None)
                loop.close()

    # -- loading -----------------------------------------------------------

    _parents_ready = False

    def _ensure_parent_packages(self):
        """Make lollms_client.tools_bindings.lcp importable.

        pickle (multiprocessing, process pools) imports a function's module
        by name, parents first. Without the real lollms_client package, stub
        packages stand in for the parents; with it, it is left alone.
        """
        if self._parents_ready:
            return
        self._parents_ready = True
        import importlib.util

        try:
            if importlib.util.find_spec("lollms_client") is not None:
                return
        except (ImportError, ValueError):
            pass
        parent = None
        for name in ("lollms_client", "lollms_client.tools_bindings", "lollms_client.tools_bindings.lcp"):
            if name not in sys.modules:
                pkg = types.ModuleType(name)
                pkg.__path__ = []
                sys.modules[name] = pkg
                if parent is not None:
                    setattr(parent, name.rsplit(".", 1)[1], pkg)
            parent = sys.modules[name]

    def _ensure_loaded(self, call, config):
        mod = self.module
        if mod is not None:
            return mod, None, False
        with self.load_lock:
            if self.module is not None:
                return self.module, None, False
            name = MODULE_PREFIX + self.stem
            self._ensure_parent_packages()
            try:
                if self.code:
                    mod = types.ModuleType(name)
                    mod.__file__ = self.path
                    sys.modules[name] = mod
                    exec(compile(self.code, self.path or "<lcp-code>", "exec"), mod.__dict__)
                else:
                    import importlib.util

                    d = os.path.dirname(self.path)
                    if d and d not in sys.path:
                        sys.path.insert(0, d)
                    spec = importlib.util.spec_from_file_location(name, self.path)
                    if spec is None or spec.loader is None:
                        raise ImportError("cannot load a module from %r" % self.path)
                    mod = importlib.util.module_from_spec(spec)
                    sys.modules[name] = mod
                    spec.loader.exec_module(mod)
                self._init_module(mod, config, call.flags)
            except CallCancelled:
                if sys.modules.get(name) is mod:
                    del sys.modules[name]
                raise
            except BaseException as e:
                if mod is not None and sys.modules.get(name) is mod:
                    del sys.modules[name]
                return None, describe_exception(e), False
            self.plans.clear()
            self.module = mod
            return mod, None, True

    def _init_module(self, mod, config, flags):
        cfg = dict(config) if isinstance(config, dict) else {}
        if flags[0] and "confirm_handler" not in cfg:
            cfg["confirm_handler"] = self.confirm_proxy
        if flags[1] and "user_interaction_handler" not in cfg:
            cfg["user_interaction_handler"] = self.interact_proxy
        if flags[0]:
            hook = getattr(mod, "set_confirm_handler", None)
            if callable(hook):
                hook(self.confirm_proxy)
        if flags[1]:
            hook = getattr(mod, "set_user_interaction_handler", None)
            if callable(hook):
                hook(self.interact_proxy)
        init = getattr(mod, "init_tools_library", None)
        if callable(init):
            if accepts_positional(init):
                init(cfg)
            else:
                init()
        self.applied_flags = flags

    def _apply_flags(self, flags):
        """Re-invoke the handler hooks of the loaded module after a change."""
        with self.flags_lock:
            mod = self.module
            old = self.applied_flags
            if mod is None or flags == old:
                return
            self.applied_flags = flags
            pairs = (("set_confirm_handler", "_CONFIRM_HANDLER", self.confirm_proxy),
                     ("set_user_interaction_handler", "_USER_INTERACTION_HANDLER",
                      self.interact_proxy))
            for i, (setter, attr, proxy) in enumerate(pairs):
                if flags[i] == old[i]:
                    continue
                value = proxy if flags[i] else None
                hook = getattr(mod, setter, None)
                if callable(hook):
                    hook(value)
                elif hasattr(mod, attr):
                    setattr(mod, attr, value)

    def _apply_flags_safely(self, flags):
        try:
            self._apply_flags(flags)
        except BaseException as e:
            d = describe_exception(e)
            self.log("warn", "handler hook failed: %s: %s" % (d["type"], d["message"]))


def _is_coroutine(value):
    if type(value).__name__ != "coroutine":
        return False
    import inspect

    return inspect.iscoroutine(value)


# ---------------------------------------------------------------------------
# Process setup


def _prctl(option, arg):
    if not _LINUX:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, arg, 0, 0, 0)
    except Exception:
        pass


def _descendants(root):
    """Pids of live processes below root, from /proc (Linux)."""
    children = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % e, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2:].split()
        if len(rest) < 2 or rest[0] == b"Z":
            continue
        children.setdefault(int(rest[1]), []).append(int(e))
    out = []
    stack = [root]
    while stack:
        for c in children.get(stack.pop(), ()):
            out.append(c)
            stack.append(c)
    return out


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return


def _kill_group(pgid):
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def guardian_main(worker_pid, status_fd):
    """Wait for the worker; then clean up below us and report its status."""
    import signal

    def on_term(signum, frame):
        _kill_group(worker_pid)

    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, on_term)
    status = None
    while status is None:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == worker_pid:
            status = st
    _kill_group(worker_pid)
    me = os.getpid()
    for _ in range(100):
        pids = _descendants(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.005)
    _reap()
    report = {}
    if status is not None:
        if os.WIFSIGNALED(status):
            report["signal"] = os.WTERMSIG(status)
        else:
            report["exit"] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    try:
        write_all(status_fd, (json.dumps(report) + "\n").encode())
    except OSError:
        pass
    os._exit(0)


def worker_setup(init, guardian_pid):
    """Process-level setup of the worker (after the fork)."""
    import faulthandler
    import resource
    import signal

    os.setpgid(0, 0)
    if _LINUX:
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except Exception:
            pass
    if os.getppid() != guardian_pid:
        os._exit(0)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    except (ValueError, OSError):
        pass
    limit = int(init.get("memory_limit") or 0)
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # A signal to the worker must not corrupt a frame being read.
    signal.signal(signal.SIGINT, lambda s, f: None)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    try:
        errfile = os.fdopen(os.dup(2), "w")
        faulthandler.enable(file=errfile, all_threads=False)
    except Exception:
        pass


def _set_name(name):
    # The name ps -o comm and top show (Linux).
    if _LINUX:
        try:
            import ctypes

            ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)  # PR_SET_NAME
        except Exception:
            pass


def _remove_cwd_from_path():
    # With -c, sys.path[0] is the CWD, i.e. the workspace: files a tool
    # writes there must not shadow modules.
    while sys.path and sys.path[0] in ("", "."):
        sys.path.pop(0)


def main():
    """Entry point called by the bootstrap (guardian, then worker)."""
    _remove_cwd_from_path()
    head = read_exact(3, 4)
    if head is None:
        os._exit(0)
    init = json.loads(read_exact(3, struct.unpack(">I", head)[0]) or b"{}")
    guardian = os.getpid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    pid = os.fork()
    if pid != 0:
        os.close(3)
        os.close(4)
        _set_name(b"lcp-guardian")
        guardian_main(pid, 5)
        return
    try:
        os.close(5)
        _set_name(b"lcp-worker")
        worker_setup(init, guardian)
        w = Worker(3, 4, init)
        w.install_process_hooks()
        w.install_streams()
        code = globals().get("_LCP_CODE")
        if init.get("want_code") and code is not None:
            # The engine keeps the compiled program for its next workers.
            import marshal
            from importlib.util import MAGIC_NUMBER

            w.code_frame = MAGIC_NUMBER + marshal.dumps(code)
        w.serve()
    except BaseException:
        try:
            msg = traceback.format_exc()
            write_all(4, encode_frame({"type": "fatal", "error": msg}))
        except BaseException:
            pass
        os._exit(70)
    os._exit(0)
