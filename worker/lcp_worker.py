"""The Python side of the lcp worker runtime (SPEC.md sections 7 and 8).

The Go engine starts this program with ``python3 -I -c BOOTSTRAP`` (see
bootstrap.go).  The bootstrap checks the interpreter version, reads this
source as the first frame of the call pipe and calls :func:`main`.

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

    fd 3  engine -> worker   calls sent while no other call is in flight; the
                             thread that reads them runs them itself, so a
                             call costs no thread switch
    fd 6  engine -> worker   everything else: calls that overlap another one,
                             cancellations, answers to host requests, handler
                             changes (read by the main thread, which never
                             runs tool code)
    fd 4  worker -> engine   results, captured output, progress, log records,
                             host requests, diagnostics
    fd 5  guardian -> engine one JSON line: the worker's exit status

Every message is a frame: the magic ``LCP2``, the body's length and its
CRC-32 (4-byte big-endian each), then the body.  Bodies from the engine are
one JSON object.  Bodies from the worker are a JSON header object, optionally
followed by a newline and a raw payload (JSON text or UTF-8 output) that is
not re-encoded.  Anything else on a pipe is a protocol violation that ends
the worker: the engine kills a worker whose frames are wrong, and the worker
exits when the engine's are.

Standard library only; Python 3.9 or newer.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import math
import os
import queue
import select
import struct
import sys
import threading
import time
import traceback
import types
import zlib
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Set, Tuple

PROTOCOL_VERSION = 2

FRAME_MAGIC = b"LCP2"
_PREFIX = struct.Struct(">4sII")

# Frames larger than this from the engine are a protocol violation.
MAX_FRAME = 1 << 30

CALL_FD, REPLY_FD, STATUS_FD, SIDE_FD = 3, 4, 5, 6

# Host objects passed to a tool that declares them (or **kwargs).
HIDDEN_INJECTED = (
    "tool_context",
    "lollms_client_instance",
    "discussion_instance",
    "user_interaction_handler",
)

# Passed only to a tool that declares them by name: **kwargs does not get
# them, so tools written before they existed see exactly what they saw then.
EVENT_HANDLERS = ("progress_handler", "log_handler")

# The levels of MCP's logging (RFC 5424 severities).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

MODULE_PREFIX = "lollms_client.tools_bindings.lcp.persistent_"

# A call's output, progress and log records go out at most this often (in
# seconds); what comes in between waits and is merged.
EVENT_INTERVAL = 0.05
# Captured output waiting for its frame is sent at once past this size.
OUTPUT_BATCH = 8192
# Log records of one call kept per interval; more are counted and dropped.
MAX_PENDING_LOGS = 100

_SELF_FILE = sys._getframe().f_code.co_filename

_LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36


class CallCancelled(BaseException):
    """Raised inside a tool's thread when the engine cancels the call."""


class ProtocolViolation(Exception):
    """The engine's pipe carried something that is not a valid frame."""


# ---------------------------------------------------------------------------
# Records


class Handlers(NamedTuple):
    """Which interaction handlers the host has; only those get a proxy."""

    confirm: bool = False
    interact: bool = False


class Listeners(NamedTuple):
    """Which per-call events the host receives; the others are not sent."""

    progress: bool = False
    log: bool = False


_HANDLERS = {(c, i): Handlers(c, i) for c in (False, True) for i in (False, True)}
_LISTENERS = {(p, lg): Listeners(p, lg) for p in (False, True) for lg in (False, True)}


class LibrarySpec(NamedTuple):
    """The library this worker serves."""

    path: str
    stem: str
    code: str  # in-memory source (dynamic registration), or ""

    @classmethod
    def from_json(cls, obj: dict) -> LibrarySpec:
        path = str(obj.get("path") or "")
        stem = str(obj.get("stem") or "") or os.path.splitext(os.path.basename(path))[0]
        return cls(path, stem, str(obj.get("code") or ""))


class WorkerConfig(NamedTuple):
    """The engine's start-up frame."""

    library: LibrarySpec
    memory_limit: int = 0
    max_result: int = 128 << 20
    output_limit: int = 1 << 20
    want_code: bool = False

    @classmethod
    def from_json(cls, obj: dict) -> WorkerConfig:
        return cls(
            library=LibrarySpec.from_json(obj.get("library") or {}),
            memory_limit=int(obj.get("memory_limit") or 0),
            max_result=int(obj.get("max_result") or (128 << 20)),
            output_limit=int(obj.get("output_limit") or (1 << 20)),
            want_code=bool(obj.get("want_code")),
        )


class CallRequest(NamedTuple):
    """A call (or load) frame from the engine."""

    id: int
    op: str  # "call" or "load"
    function: str
    handlers: Handlers
    listeners: Listeners
    has_llm: bool
    has_discussion: bool
    args: dict
    context: Any
    config: Optional[dict]  # host_tool_configs[stem]; only until the library is loaded

    @classmethod
    def from_frame(cls, msg: dict) -> CallRequest:
        get = msg.get
        try:
            h, ev = get("h"), get("ev")
            args, context = get("args"), get("context")
            # Positional, without the generated __new__, and with shared flag
            # records: this runs per call.
            return tuple.__new__(cls, (
                int(msg["id"]),
                msg["type"],
                get("fn") or "",
                _HANDLERS[bool(h[0]), bool(h[1])] if h else _HANDLERS[False, False],
                _LISTENERS[bool(ev[0]), bool(ev[1])] if ev else _LISTENERS[False, False],
                bool(get("llm")),
                bool(get("disc")),
                {} if args is None else args,
                {} if context is None else context,
                get("config"),
            ))  # type: ignore[return-value]
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise ProtocolViolation(f"malformed {msg.get('type')} frame: {e}") from None


class ExceptionInfo(NamedTuple):
    """A Python exception as the engine sees it, worker frames removed."""

    type: str
    message: str
    traceback: str

    def to_json(self) -> dict:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


class Conversion(NamedTuple):
    """A lossy conversion of a value JSON cannot carry (SPEC section 16)."""

    path: str  # a JSON pointer into the value
    source: str  # "bytes"
    target: str  # "base64"

    def to_json(self) -> dict:
        return {"path": self.path, "from": self.source, "to": self.target}


class Outcome(NamedTuple):
    """What running a call produced: the header of its result frame.

    At most one of value, exception, load_error, internal,
    not_module_level, too_large and functions is set.
    """

    value: Optional[bytes] = None  # the return value as JSON
    converted: Optional[List[Conversion]] = None
    exception: Optional[ExceptionInfo] = None
    load_error: Optional[ExceptionInfo] = None
    internal: Optional[ExceptionInfo] = None  # a failure of the worker itself
    not_module_level: bool = False
    too_large: int = 0  # the size of a value over the limit
    functions: Optional[List[str]] = None  # a load's tool_* functions

    @classmethod
    def of_value(cls, data: bytes) -> Outcome:
        """The outcome of a plain value (the warm call's case)."""
        return tuple.__new__(cls, (data, None, None, None, None, False, 0, None))  # type: ignore[return-value]

    def header(self, call_id: int) -> dict:
        h: Dict[str, Any] = {"type": "result", "id": call_id}
        for key, info in (("exception", self.exception), ("load_error", self.load_error),
                          ("internal", self.internal)):
            if info is not None:
                h[key] = info.to_json()
        if self.not_module_level:
            h["not_module_level"] = True
        if self.too_large:
            h["too_large"] = self.too_large
        if self.functions is not None:
            h["functions"] = self.functions
        if self.converted:
            h["converted"] = [c.to_json() for c in self.converted]
        return h


class ProgressUpdate(NamedTuple):
    progress: float
    total: Optional[float]
    message: Optional[str]


class LogEntry(NamedTuple):
    level: str
    message: str
    data: Optional[bytes]  # JSON


# ---------------------------------------------------------------------------
# Framing


def write_all(fd: int, data: bytes) -> None:
    n = os.write(fd, data)
    if n < len(data):  # a pipe takes big writes in parts
        view = memoryview(data)[n:]
        while view:
            n = os.write(fd, view)
            view = view[n:]


def _crc(*parts: bytes) -> int:
    crc = 0
    for p in parts:
        crc = zlib.crc32(p, crc)
    return crc


def encode_frame(header: dict, payload: Optional[bytes] = None) -> bytes:
    """The frame of a header (and an optional raw payload)."""
    h = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    body = h if payload is None else b"".join((h, b"\n", payload))
    return _PREFIX.pack(FRAME_MAGIC, len(body), zlib.crc32(body)) + body


_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def parse_json(data: bytes) -> Any:
    """json.loads of UTF-8 JSON that starts at its first byte.

    The decoder's scanner, called directly: json.loads spends more on
    detecting the encoding and checking the ends than on parsing a small
    call frame.  Bytes that are not UTF-8 become U+FFFD, as JSON parsers do:
    the engine sends valid UTF-8, and no argument may end the worker.
    """
    text = data.decode("utf-8", "replace")
    try:
        obj, end = _scan_once(text, 0)
    except StopIteration:
        raise ValueError("no JSON value at the start") from None
    if end != len(text):
        raise ValueError(f"extra data at byte {end}")
    return obj


def split_frame(body: bytes) -> Tuple[dict, bytes]:
    """Split a worker frame's body into its JSON header and its raw payload."""
    i = body.find(b"\n")
    if i < 0:
        return json.loads(body), b""
    return json.loads(body[:i]), body[i + 1:]


class FrameReader:
    """Reads frames from a pipe, buffering what arrives beyond a frame."""

    def __init__(self, fd: int, limit: int = MAX_FRAME):
        self.fd = fd
        self.limit = limit
        self._buf = b""

    def buffered(self) -> bool:
        """Whether bytes of a next frame are already read."""
        return bool(self._buf)

    def read_body(self) -> Optional[bytes]:
        """The next frame's body; None at the end of the pipe."""
        buf = self._buf
        while len(buf) < _PREFIX.size:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            buf += chunk
        magic, n, crc = _PREFIX.unpack_from(buf)
        if magic != FRAME_MAGIC:
            raise ProtocolViolation(f"bytes that are not a frame: {bytes(buf[:16])!r}")
        if n > self.limit:
            raise ProtocolViolation(f"a frame of {n} bytes, over the limit of {self.limit}")
        end = _PREFIX.size + n
        if len(buf) < end:
            parts = [buf]
            have = len(buf)
            while have < end:
                chunk = os.read(self.fd, max(1 << 16, min(end - have, 1 << 24)))
                if not chunk:
                    return None
                parts.append(chunk)
                have += len(chunk)
            buf = b"".join(parts)
        body = buf[_PREFIX.size:end]
        self._buf = buf[end:]
        if zlib.crc32(body) != crc:
            raise ProtocolViolation("a frame that fails its checksum")
        return body

    def read(self) -> Optional[dict]:
        """The next frame from the engine (one JSON object); None at the end."""
        body = self.read_body()
        if body is None:
            return None
        try:
            msg = parse_json(body)
        except ValueError as e:
            raise ProtocolViolation(f"a frame that is not JSON: {e}") from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise ProtocolViolation("a frame without a type")
        return msg


class FrameWriter:
    """Writes frames to the reply pipe, one whole frame at a time."""

    def __init__(self, fd: int):
        self.fd = fd
        self.lock = threading.Lock()
        # Set in a child that a tool forked without exec: it must not speak
        # for the worker.
        self.disabled = False

    def send(self, header: dict, payload: Optional[bytes] = None) -> None:
        self._write_one(encode_frame(header, payload))

    def send_value(self, call_id: int, data: bytes) -> None:
        """The result frame of a plain return value, without the JSON encoder."""
        if len(data) < 1 << 16:
            body = b'{"type":"result","id":%d}\n%b' % (call_id, data)
            self._write_one(_PREFIX.pack(FRAME_MAGIC, len(body), zlib.crc32(body)) + body)
        else:
            head = b'{"type":"result","id":%d}\n' % call_id
            prefix = _PREFIX.pack(FRAME_MAGIC, len(head) + len(data), zlib.crc32(data, zlib.crc32(head)))
            # Do not copy a big value to prepend its header.
            self._write(prefix + head, data)

    def _write_one(self, frame: bytes) -> None:
        """_write of one part, the reply's common case."""
        if self.disabled:
            return
        with self.lock:
            try:
                n = os.write(self.fd, frame)
                if n < len(frame):
                    write_all(self.fd, memoryview(frame)[n:])
            except OSError:
                os._exit(0)

    def _write(self, *parts: bytes) -> None:
        if self.disabled:
            return
        with self.lock:
            try:
                for p in parts:
                    write_all(self.fd, p)
            except OSError:
                # The engine is gone (or a tool closed our pipe): nothing
                # left to serve.
                os._exit(0)


# ---------------------------------------------------------------------------
# JSON conversion (SPEC section 16, "Conversion of values JSON cannot carry")

_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _make_encode() -> Callable[[Any], str]:
    """_encoder.encode without building an encoder for every value.

    JSONEncoder.encode makes a new C encoder per call, which costs more than
    encoding a small result; this one is made once.  Cycles then surface as
    RecursionError, which to_json handles.  Falls back to _encoder.encode
    where the C encoder is missing or takes other arguments.
    """
    try:
        from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]

        if c_make_encoder is None:
            return _encoder.encode
        enc = c_make_encoder(None, _encoder.default, encode_basestring, None,
                             ":", ",", False, False, False)
        if "".join(enc({"a": [1, 2.5, "é"]}, 0)) != '{"a":[1,2.5,"é"]}':
            return _encoder.encode
        return lambda value: "".join(enc(value, 0))
    except Exception:
        return _encoder.encode


_encode = _make_encode()


class ConversionError(Exception):
    """A tool's value could not be converted to JSON at all."""


def to_json(value: Any) -> Tuple[bytes, Optional[List[Conversion]]]:
    """Convert a tool's return value to UTF-8 JSON bytes.

    Returns the JSON and the lossy conversions made, or None.
    """
    notes: Optional[List[Conversion]] = None
    try:
        text = _encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        notes = []
        try:
            converted = _convert(value, "", notes, set())
        except RecursionError:
            raise ConversionError("the value is nested too deeply to convert to JSON") from None
        text = _encoder.encode(converted)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: let JSON escapes carry them.
        data = _ascii_encoder.encode(json.loads(text)).encode("ascii")
    return data, (notes or None)


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _json_key(k: Any) -> str:
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


def _safe_repr(v: Any) -> str:
    try:
        return repr(v)
    except Exception:
        return f"<unrepresentable {type(v).__name__}>"


def _sorted_set(s: Any) -> list:
    try:
        return sorted(s)
    except Exception:
        pass
    try:
        return sorted(s, key=_safe_repr)
    except Exception:
        return list(s)


def _convert(v: Any, path: str, notes: List[Conversion], active: Set[int]) -> Any:
    if v is None or v is True or v is False:
        return v
    t = type(v)
    if t is str or t is int:
        return v
    if t is float or isinstance(v, float):
        f = float(v)
        return f if math.isfinite(f) else repr(f)
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, (bytes, bytearray)):
        notes.append(Conversion(path, "bytes", "base64"))
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
                    out[key] = _convert(x, f"{path}/{_pointer_token(key)}", notes, active)
                return out
            items = _sorted_set(v) if isinstance(v, (set, frozenset)) else v
            return [_convert(x, f"{path}/{i}", notes, active) for i, x in enumerate(items)]
        finally:
            active.discard(ident)
    return _safe_repr(v)


# ---------------------------------------------------------------------------
# Exceptions


def _internal_frame(filename: str) -> bool:
    return filename == _SELF_FILE or filename.startswith("<frozen importlib")


def describe_exception(e: BaseException) -> ExceptionInfo:
    """Type, message and traceback of an exception, worker frames removed."""
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
        text = f"Traceback (most recent call last):\n{type(e).__name__}: {message}\n"
    return ExceptionInfo(type(e).__name__, message, text)


# ---------------------------------------------------------------------------
# Calling conventions (SPEC section 7, steps 6 and 7)


class CallPlan:
    """How to call one tool function: which names it takes and how.

    Computed once per function object: inspect.signature costs more than the
    rest of a call.
    """

    __slots__ = ("posonly", "named", "var_kw", "inject", "unknown", "plain")

    def __init__(self, fn: Callable):
        # Deferred: inspect costs milliseconds at start-up and is needed only
        # once a function is called.
        import inspect

        self.posonly: List[str] = []
        self.named: Set[str] = set()
        self.var_kw = False
        self.unknown = False
        self.inject: Tuple[str, ...] = ()
        self.plain = False
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            self.unknown = True
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
        self.inject = tuple(n for n in HIDDEN_INJECTED if self.var_kw or n in self.named) + \
            tuple(n for n in EVENT_HANDLERS if n in self.named)
        # Keyword parameters only, nothing injected: bind() is a filter.
        self.plain = not (self.posonly or self.var_kw or self.inject)

    def bind(self, args: dict, injected: Optional[Callable[[str], Any]]) -> Tuple[list, dict]:
        """Positional and keyword arguments for a call.

        Unknown names are dropped unless the function has **kwargs; the host
        objects are injected only when declared (or **kwargs; the event
        handlers only when declared); positional-only parameters are passed
        positionally up to the first missing one.
        """
        if self.unknown:
            return [], dict(args)
        if self.plain:
            named = self.named
            return _NO_POSITIONAL, (args if named.issuperset(args) else
                                    {k: v for k, v in args.items() if k in named})
        if self.var_kw:
            kwargs = dict(args)
        else:
            named = self.named
            kwargs = {k: v for k, v in args.items() if k in named}
        if injected is not None:
            for name in self.inject:
                kwargs[name] = injected(name)
        positional = []
        for name in self.posonly:
            if name not in kwargs:
                break
            positional.append(kwargs.pop(name))
        return positional, kwargs


_NO_POSITIONAL: list = []  # never changed: bind's callers only unpack it


def accepts_positional(fn: Callable) -> bool:
    """Whether fn can take one positional argument (init_tools_library rule)."""
    # Deferred like in CallPlan.
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    P = inspect.Parameter
    return any(p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL)
               for p in sig.parameters.values())


_CoroutineType = types.CoroutineType


def _is_coroutine(value: Any) -> bool:
    # What inspect.iscoroutine tests, without importing inspect.
    return isinstance(value, _CoroutineType)


def _async_raise(tid: int, exc_type: Optional[type]) -> int:
    """Schedule exc_type in thread tid (None clears a pending one)."""
    # Deferred: ctypes costs milliseconds at start-up; only a cancellation
    # needs it.
    import ctypes

    obj = ctypes.py_object(exc_type) if exc_type is not None else None
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), obj)


# ---------------------------------------------------------------------------
# Calls


class Waiter:
    """A thread waiting for the host's answer to one request."""

    __slots__ = ("event", "value", "cancelled")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.value: Any = None
        self.cancelled = False


class Call:
    """One call in flight in the worker: its request and its mutable state.

    ``lock`` guards finished, cancel_requested, tid, loop, task and waiters:
    the call's own thread, the thread that cancels it and the threads that
    ask the host on its behalf all change them.
    """

    __slots__ = ("worker", "request", "id", "lock", "finished", "cancel_requested",
                 "tid", "loop", "task", "waiters", "_events")

    def __init__(self, worker: Worker, request: CallRequest):
        self.worker = worker
        self.request = request
        self.id = request.id
        self.lock = threading.Lock()
        self.finished = False
        self.cancel_requested = False
        self.tid: Optional[int] = None
        self.loop: Any = None  # the asyncio loop of an async tool
        self.task: Any = None
        self.waiters: Set[Waiter] = set()
        self._events: Optional[CallEvents] = None

    @property
    def events(self) -> CallEvents:
        """The call's output, progress and log records (made on first use)."""
        ev = self._events
        if ev is None:
            with self.lock:
                if self._events is None:
                    self._events = CallEvents(self.id, self.worker)
                ev = self._events
        return ev

    def close_events(self) -> None:
        """Send what the call printed or reported; later events are dropped."""
        ev = self._events
        if ev is not None:
            ev.close()


# ---------------------------------------------------------------------------
# Events: output capture, progress and log records


def _thread_call() -> Optional[Call]:
    return getattr(threading.current_thread(), "_lcp_call", None)


def current_call() -> Optional[Call]:
    """The call the running thread works for.

    A thread belongs to the call that runs in it or that started it (see
    _install_thread_inheritance); a thread that came from elsewhere belongs
    to the only call in flight, if there is exactly one.
    """
    call = _thread_call()
    if call is not None and not call.finished:
        return call
    worker = _active_worker
    if worker is not None:
        return worker.calls.only()
    return None


_active_worker: Optional[Worker] = None


_orig_thread_start = threading.Thread.start


def _start_with_call(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
    self._lcp_call = _thread_call()  # type: ignore[attr-defined]
    return _orig_thread_start(self, *args, **kwargs)


def _install_thread_inheritance() -> None:
    """Make every thread a tool starts belong to the tool's call.

    Why a patch of threading.Thread.start: what a thread started by a tool
    prints, and the handler requests it makes, must be attributed to the
    tool's call (SPEC section 7), also for threads that libraries start for
    it (concurrent.futures, multiprocessing.pool).  Python has no hook at
    thread creation, and new threads do not inherit contextvars before 3.14.
    The patch only copies the starting thread's call onto the new Thread
    object; it is installed once, in the worker process only.
    """
    threading.Thread.start = _start_with_call  # type: ignore[assignment]


class StreamBuffer:
    """One stream's captured output of a call."""

    __slots__ = ("name", "parts", "used", "dropped")

    def __init__(self, name: str):
        self.name = name
        self.parts: List[str] = []
        self.used = 0  # characters kept, against the limit
        self.dropped = 0  # characters over the limit, not yet reported


class CallEvents:
    """A call's printed output, progress and log records on their way out.

    Rate-safe: a call sends at most one frame of each kind per
    EVENT_INTERVAL.  Output is concatenated (and capped at the worker's
    per-call limit, the excess counted), progress is coalesced to its latest
    value, log records are batched (past MAX_PENDING_LOGS in an interval
    they are counted and dropped).  What waits goes out with the flusher
    thread, or at once when the call ends: close() sends the rest before
    the call's result, and drops whatever comes later (a thread the tool
    left running then prints to the worker's own stdout and stderr).

    ``lock`` keeps the call's frames in order.
    """

    __slots__ = ("id", "worker", "lock", "closed", "streams", "pending", "progress",
                 "logs", "logs_dropped", "last_sent", "scheduled")

    def __init__(self, call_id: int, worker: Worker):
        self.id = call_id
        self.worker = worker
        self.lock = threading.Lock()
        self.closed = False
        self.streams = (StreamBuffer("stdout"), StreamBuffer("stderr"))
        self.pending = 0  # characters of output waiting
        self.progress: Optional[ProgressUpdate] = None
        self.logs: List[LogEntry] = []
        self.logs_dropped = 0
        self.last_sent = 0.0
        self.scheduled = False

    def capture(self, stream: int, text: str) -> bool:
        """Keep text the call printed; False when the call has ended."""
        limit = self.worker.config.output_limit
        with self.lock:
            if self.closed:
                return False
            buf = self.streams[stream]
            room = limit - buf.used
            if room <= 0:
                buf.dropped += len(text)
                return True
            if len(text) > room:
                buf.dropped += len(text) - room
                text = text[:room]
            buf.used += len(text)
            buf.parts.append(text)
            self.pending += len(text)
            # Whole lines go out at once; a line being written waits.
            self._due(self.pending >= OUTPUT_BATCH, text.endswith("\n"))
        return True

    def report_progress(self, update: ProgressUpdate) -> None:
        with self.lock:
            if self.closed:
                return
            self.progress = update
            self._due(False, True)

    def log(self, entry: LogEntry) -> None:
        with self.lock:
            if self.closed:
                return
            if len(self.logs) >= MAX_PENDING_LOGS:
                self.logs_dropped += 1
                return
            self.logs.append(entry)
            self._due(False, True)

    def flush(self) -> None:
        """Send what waits (from print(..., flush=True) and the flusher)."""
        with self.lock:
            if not self.closed:
                self._send(False)

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self._send(True)
                self.closed = True

    def _due(self, now: bool, ready: bool) -> None:
        # Called with the lock held: send at once when much output waits,
        # or when what came is ready and the call has been quiet for an
        # interval; else leave it to the flusher.
        if now or (ready and time.monotonic() - self.last_sent >= EVENT_INTERVAL):
            self._send(False)
        elif not self.scheduled:
            self.scheduled = True
            self.worker.flusher.schedule(self)

    def _send(self, final: bool) -> None:
        # Called with the lock held.  Event bodies are ASCII JSON: a lone
        # surrogate in a message travels as an escape.
        send = self.worker.out.send
        sent = False
        for buf in self.streams:
            if buf.parts:
                text = "".join(buf.parts)
                buf.parts = []
                send({"type": "output", "id": self.id, "stream": buf.name},
                     text.encode("utf-8", "replace"))
                sent = True
            if final and buf.dropped:
                send({"type": "output", "id": self.id, "stream": buf.name, "dropped": buf.dropped}, b"")
                buf.dropped = 0
        self.pending = 0
        if self.progress is not None:
            p = self.progress
            self.progress = None
            body: Dict[str, Any] = {"progress": p.progress}
            if p.total is not None:
                body["total"] = p.total
            if p.message is not None:
                body["message"] = p.message
            send({"type": "progress", "id": self.id}, _ascii_encoder.encode(body).encode("ascii"))
            sent = True
        if self.logs_dropped:
            self.logs.append(LogEntry(
                "warning", f"lcp: {self.logs_dropped} log records dropped "
                f"(more than {MAX_PENDING_LOGS} in {int(EVENT_INTERVAL * 1000)} ms)", None))
            self.logs_dropped = 0
        if self.logs:
            parts = []
            for e in self.logs:
                head = _ascii_encoder.encode({"level": e.level, "message": e.message}).encode("ascii")
                parts.append(head if e.data is None else head[:-1] + b',"data":' + e.data + b"}")
            self.logs = []
            send({"type": "log", "id": self.id}, b"[" + b",".join(parts) + b"]")
            sent = True
        if sent:
            self.last_sent = time.monotonic()
        self.scheduled = False


class EventFlusher:
    """The thread that sends the events calls left waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: Set[CallEvents] = set()
        self._wake = threading.Event()

    def schedule(self, events: CallEvents) -> None:
        with self._lock:
            self._due.add(events)
        self._wake.set()

    def run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(EVENT_INTERVAL)
            self._wake.clear()
            with self._lock:
                due = list(self._due)
                self._due.clear()
            for events in due:
                try:
                    events.flush()
                except Exception:
                    pass


class _ByteSink:
    """sys.stdout.buffer of a routed stream."""

    def __init__(self, stream: RoutedStream):
        self._stream = stream

    def write(self, b: Any) -> int:
        self._stream.write(bytes(b).decode("utf-8", "replace"))
        return len(b)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


class RoutedStream(io.TextIOBase):
    """A sys.stdout / sys.stderr that sends each call's writes to the engine.

    Writes from a thread that belongs to a running call are captured for that
    call; anything else goes to the worker's original fd, which the engine
    drains as unattributed output.
    """

    def __init__(self, name: str, index: int, fd: int):
        super().__init__()
        self._name = name
        self._index = index
        self._fd = fd
        self.buffer = _ByteSink(self)

    @property  # type: ignore[override]
    def encoding(self) -> str:
        return "utf-8"

    @property  # type: ignore[override]
    def errors(self) -> str:  # type: ignore[override]
        return "replace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def flush(self) -> None:
        # print(..., flush=True) delivers at once instead of with the
        # flusher.
        call = _thread_call()
        if call is not None and call._events is not None:
            call._events.flush()

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        # Only the threads of a call (not the single-call fallback of
        # current_call): a thread a finished call left running must not
        # print into the next call.
        call = _thread_call()
        if call is None or call.finished or not call.events.capture(self._index, s):
            try:
                write_all(self._fd, s.encode("utf-8", "replace"))
            except OSError:
                pass
        return len(s)


# ---------------------------------------------------------------------------
# Host requests


class HostChannel:
    """Requests from tools to the engine's host, and the threads that wait.

    ``_lock`` guards the waiters by request id: the requesting threads add
    and remove theirs, the main thread wakes them with answers.
    """

    def __init__(self, out: FrameWriter, max_request: int):
        self._out = out
        self._max = max_request
        self._lock = threading.Lock()
        self._waiters: Dict[int, Waiter] = {}
        self._rids = itertools.count(1)

    def request(self, call: Call, kind: str, fields: Optional[dict] = None,
                payload: Optional[bytes] = None) -> Any:
        """Ask the host on behalf of call and block until it answers."""
        if payload is not None and len(payload) > self._max:
            raise ValueError(f"request of {len(payload)} bytes is over the limit of {self._max} bytes")
        w = Waiter()
        rid = next(self._rids)
        header = {"type": "request", "id": call.id, "rid": rid, "kind": kind}
        if fields:
            header.update(fields)
        with call.lock:
            if call.cancel_requested:
                raise CallCancelled()
            if call.finished:
                raise RuntimeError("the tool call that owns this request has already ended")
            call.waiters.add(w)
            with self._lock:
                self._waiters[rid] = w
            # Sent under the call's lock: the call cannot finish meanwhile,
            # so its requests always precede its result on the pipe.
            self._out.send(header, payload)
        try:
            w.event.wait()
        finally:
            with self._lock:
                self._waiters.pop(rid, None)
            with call.lock:
                call.waiters.discard(w)
        if w.cancelled:
            raise CallCancelled()
        return w.value

    def answer(self, rid: Any, value: Any) -> None:
        with self._lock:
            w = self._waiters.pop(rid, None)
        if w is not None:  # else the request was cancelled meanwhile
            w.value = value
            w.event.set()

    def service(self, call: Call, name: str, params: Any) -> Any:
        """Ask the host's service name (a ServiceHost on the engine's side)."""
        data, _ = to_json(params)
        answer = self.request(call, "service", {"name": str(name)}, data)
        if not isinstance(answer, dict):
            raise RuntimeError(f"the host's service {name!r} gave no answer")
        if answer.get("error") is not None:
            raise RuntimeError(str(answer["error"]))
        return answer.get("result")


def _host_service(name: str, params: Any = None) -> Any:
    """Ask the host's service name for the running call, and return its result.

    The generic host request behind proxies that need no frames of their own
    (the host answers through its worker.ServiceHost).  Raises RuntimeError
    with the host's error text, or when no call is running.
    """
    call = current_call()
    if call is None:
        raise RuntimeError(f"no tool call is running to ask the host's service {name!r}")
    return call.worker.host.service(call, name, params)


# ---------------------------------------------------------------------------
# Host proxies


class ConfirmHandlerProxy:
    """confirm_handler(source, script_label, argv=None) -> (decision, reason)."""

    def __init__(self, host: HostChannel):
        self._host = host

    def __call__(self, source: Any, script_label: Any, argv: Any = None) -> Tuple[str, str]:
        call = current_call()
        if call is None:
            return ("reject", "No tool call is running to ask the host for confirmation.")
        answer = self._host.request(call, "confirm", {
            "source": str(source),
            "script_label": str(script_label),
            "argv": None if argv is None else [str(a) for a in argv],
        })
        if not isinstance(answer, dict):
            return ("reject", "The host gave no decision.")
        return (str(answer.get("decision") or "reject"), str(answer.get("reason") or ""))

    def __repr__(self) -> str:
        return "<lcp confirm_handler proxy>"


class InteractionHandlerProxy:
    """user_interaction_handler(request_dict) -> str or None."""

    def __init__(self, host: HostChannel):
        self._host = host

    def __call__(self, request: Any) -> Optional[str]:
        call = current_call()
        if call is None:
            return None
        data, _ = to_json(request)
        answer = self._host.request(call, "interact", payload=data)
        return None if answer is None else str(answer)

    def __repr__(self) -> str:
        return "<lcp user_interaction_handler proxy>"


class ProgressHandler:
    """progress_handler(progress, total=None, message=None): reports progress.

    Calls in a tight loop are coalesced (the engine gets the latest value at
    most every EVENT_INTERVAL); without a listening host it does nothing.
    """

    __slots__ = ("_call",)

    def __init__(self, call: Call):
        self._call = call

    def __call__(self, progress: Any, total: Any = None, message: Any = None) -> None:
        update = ProgressUpdate(_finite(progress, "progress"),
                                None if total is None else _finite(total, "total"),
                                None if message is None else str(message))
        if self._call.request.listeners.progress:
            self._call.events.report_progress(update)

    def __repr__(self) -> str:
        return "<lcp progress_handler>"


class LogHandler:
    """log_handler(message, level="info", data=None): a log record for the host.

    Levels are MCP's (debug, info, notice, warning, error, critical, alert,
    emergency); data is any value JSON can carry (converted like results).
    Records are batched; without a listening host it does nothing.
    """

    __slots__ = ("_call",)

    def __init__(self, call: Call):
        self._call = call

    def __call__(self, message: Any, level: str = "info", data: Any = None) -> None:
        lvl = str(level).strip().lower()
        if lvl not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LOG_LEVELS)}")
        encoded = None if data is None else to_json(data)[0]
        if self._call.request.listeners.log:
            self._call.events.log(LogEntry(lvl, str(message), encoded))

    def __repr__(self) -> str:
        return "<lcp log_handler>"


def _finite(v: Any, what: str) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, not {type(v).__name__}") from None
    if not math.isfinite(f):
        raise ValueError(f"{what} must be finite, not {f!r}")
    return f


def _options(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Keyword arguments for the host: callbacks (streaming_callback...) stay here."""
    return {k: v for k, v in kwargs.items() if not callable(v)}


class MediaBytes(bytes):
    """The bytes of a generated image or sound, with its MIME type.

    A plain bytes value for the code that writes it to a file; mime_type
    (image/png, audio/mpeg...) is what a content block of the result needs:
    {"type": "image", "data": img, "mimeType": img.mime_type}.
    """

    mime_type: str

    def __new__(cls, data: bytes, mime_type: str = "application/octet-stream") -> MediaBytes:
        obj = super().__new__(cls, data)
        obj.mime_type = mime_type or "application/octet-stream"
        return obj


class _Bound:
    """A proxy bound to the call it was given to."""

    def __init__(self, host: HostChannel, call: Call):
        self._host = host
        self._call = call

    def _current(self) -> Call:
        # A proxy kept past its call (in module state) works for the call
        # that uses it.
        return current_call() or self._call


class _Modality(_Bound):
    """A model of the host (client.llm, .tti, .tts, .stt).

    Its model is the one switch_model / switch_tti / ... chose for the rest
    of the call (models[name]), else the host's default.
    """

    name = ""

    def __init__(self, host: HostChannel, call: Call, models: Dict[str, str]):
        super().__init__(host, call)
        self._models = models

    def _ask(self, service: str, params: Any) -> Any:
        return self._host.service(self._current(), service, params)

    @property
    def model_name(self) -> Optional[str]:
        """The model switched to in this call, or None for the host's default."""
        return self._models.get(self.name)

    def list_models(self, **kwargs: Any) -> List[str]:
        """The names switch_* accepts for this model (the endpoint's models, or the profiles' aliases)."""
        answer = self._ask("models.list", {"modality": self.name})
        return list((answer or {}).get("models") or [])


class LLMProxy(_Modality):
    """client.llm when the host has an LLM."""

    name = "llm"

    def generate_text(self, prompt: Any, n_predict: Optional[int] = None, **kwargs: Any) -> str:
        options = _options(kwargs)
        if n_predict is not None:
            options = {"n_predict": n_predict, **options}
        if self.name in self._models and "model" not in options:
            options["model"] = self._models[self.name]
        opts, _ = to_json(options)
        answer = self._host.request(self._current(), "generate", {"prompt": str(prompt)}, opts)
        if not isinstance(answer, dict):
            raise RuntimeError("generation failed")
        if answer.get("error") is not None:
            raise RuntimeError(answer["error"])
        return answer.get("text", "")

    generate = generate_text

    def __repr__(self) -> str:
        return "<lcp llm proxy>"


def _media_bytes(source: Any, what: str) -> bytes:
    """The bytes of a media argument: bytes, a path (in the workspace) or a file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return f.read()
    if hasattr(source, "read"):
        return source.read()
    raise TypeError(f"{what} must be a path, bytes or a file, not {type(source).__name__}")


class TTIProxy(_Modality):
    """client.tti: the host's image model (an OpenAI-compatible /images/generations)."""

    name = "tti"

    def generate_image(self, prompt: Any, negative_prompt: Any = "", width: Optional[int] = None,
                       height: Optional[int] = None, **kwargs: Any) -> MediaBytes:
        """The image's bytes (PNG, JPEG... see .mime_type)."""
        answer = self._ask("tti.generate_image", {
            "prompt": str(prompt), "negative_prompt": "" if negative_prompt is None else str(negative_prompt),
            "width": int(width or 0), "height": int(height or 0),
            "model": self._models.get(self.name, ""), "options": _options(kwargs)})
        img = MediaBytes(base64.b64decode(answer["data"]), answer.get("mime_type") or "")
        img.revised_prompt = answer.get("revised_prompt") or None  # type: ignore[attr-defined]
        return img

    def generate(self, prompt: Any, negative_prompt: Any = "", width: Optional[int] = None,
                 height: Optional[int] = None, **kwargs: Any) -> Any:
        """generate_omni's result: one image, no text."""
        img = self.generate_image(prompt, negative_prompt, width, height, **kwargs)
        return types.SimpleNamespace(images=[img], text=None, raw=img)

    def edit_image(self, images: Any = None, prompt: Any = "", mask: Any = None, width: Optional[int] = None,
                   height: Optional[int] = None, **kwargs: Any) -> MediaBytes:
        """The edited image's bytes: images (a path in the workspace, bytes, a file, or a list of them) edited as prompt says."""
        if images is None:
            raise TypeError("edit_image needs images= (a path, bytes, or a list of them)")
        items = list(images) if isinstance(images, (list, tuple)) else [images]
        data = [base64.b64encode(_media_bytes(x, "images")).decode("ascii") for x in items]
        params: Dict[str, Any] = {
            "images": data, "prompt": str(prompt or ""), "width": int(width or 0), "height": int(height or 0),
            "model": self._models.get(self.name, ""), "options": _options(kwargs)}
        if mask is not None:
            params["mask"] = base64.b64encode(_media_bytes(mask, "mask")).decode("ascii")
        answer = self._ask("tti.edit_image", params)
        img = MediaBytes(base64.b64decode(answer["data"]), answer.get("mime_type") or "")
        img.revised_prompt = answer.get("revised_prompt") or None  # type: ignore[attr-defined]
        return img

    def __repr__(self) -> str:
        return "<lcp tti proxy>"


class TTSProxy(_Modality):
    """client.tts: the host's speech model (an OpenAI-compatible /audio/speech)."""

    name = "tts"

    def generate_audio(self, text: Any, voice: Optional[str] = None, **kwargs: Any) -> MediaBytes:
        """The sound's bytes (mp3 by default, see .mime_type); format= or response_format= and speed= are passed on."""
        options = _options(kwargs)
        fmt = options.pop("format", None) or options.pop("response_format", None)
        speed = options.pop("speed", None)
        answer = self._ask("tts.generate_audio", {
            "text": str(text), "voice": "" if voice is None else str(voice),
            "format": "" if fmt is None else str(fmt), "speed": float(speed or 0),
            "model": self._models.get(self.name, ""), "options": options})
        return MediaBytes(base64.b64decode(answer["data"]), answer.get("mime_type") or "")

    def list_voices(self, **kwargs: Any) -> List[str]:
        return list((self._ask("tts.list_voices", {}) or {}).get("voices") or [])

    def __repr__(self) -> str:
        return "<lcp tts proxy>"


class STTProxy(_Modality):
    """client.stt: the host's transcription model (an OpenAI-compatible /audio/transcriptions)."""

    name = "stt"

    def transcribe_audio(self, audio_source: Any, model: Optional[str] = None, **kwargs: Any) -> str:
        """The text of a sound: a file path (in the workspace), bytes, or a file object."""
        name = ""
        if isinstance(audio_source, (bytes, bytearray, memoryview)):
            data = bytes(audio_source)
        elif isinstance(audio_source, (str, os.PathLike)):
            with open(audio_source, "rb") as f:
                data = f.read()
            name = os.path.basename(os.fspath(audio_source))
        elif hasattr(audio_source, "read"):
            data = audio_source.read()
            name = os.path.basename(str(getattr(audio_source, "name", "") or ""))
        else:
            raise TypeError(f"audio_source must be a path, bytes or a file, not {type(audio_source).__name__}")
        options = _options(kwargs)
        language = options.pop("language", None)
        prompt = options.pop("prompt", None)
        answer = self._ask("stt.transcribe_audio", {
            "audio": base64.b64encode(data).decode("ascii"), "file_name": name,
            "model": str(model) if model else self._models.get(self.name, ""),
            "language": "" if language is None else str(language), "prompt": "" if prompt is None else str(prompt),
            "options": options})
        return str((answer or {}).get("text") or "")

    def __repr__(self) -> str:
        return "<lcp stt proxy>"


class TTMProxy(_Modality):
    """client.ttm: the host's music model (lcp.MusicGenerator)."""

    name = "ttm"

    def generate_music(self, prompt: Any = "", lyrics: Any = None, **kwargs: Any) -> MediaBytes:
        """The music's bytes (see .mime_type); lyrics= makes it a song."""
        answer = self._ask("ttm.generate_music", {
            "prompt": str(prompt or ""), "lyrics": "" if lyrics is None else str(lyrics),
            "model": self._models.get(self.name, ""), "options": _options(kwargs)})
        return MediaBytes(base64.b64decode(answer["data"]), answer.get("mime_type") or "")

    def generate_song(self, prompt: Any = "", lyrics: Any = None, **kwargs: Any) -> MediaBytes:
        return self.generate_music(prompt, lyrics, **kwargs)

    def generate_song_from_lyrics(self, lyrics: Any, prompt: Any = "", **kwargs: Any) -> MediaBytes:
        if not lyrics:
            raise ValueError("generate_song_from_lyrics needs lyrics")
        return self.generate_music(prompt, lyrics, **kwargs)

    def __repr__(self) -> str:
        return "<lcp ttm proxy>"


class TTVProxy(_Modality):
    """client.ttv: the host's video model (lcp.VideoGenerator)."""

    name = "ttv"

    def generate_video(self, prompt: Any, **kwargs: Any) -> MediaBytes:
        """The video's bytes (see .mime_type)."""
        answer = self._ask("ttv.generate_video", {
            "prompt": str(prompt or ""), "model": self._models.get(self.name, ""), "options": _options(kwargs)})
        return MediaBytes(base64.b64decode(answer["data"]), answer.get("mime_type") or "")

    def __repr__(self) -> str:
        return "<lcp ttv proxy>"


class RAGProxy(_Modality):
    """client.rag: the host's retrieval store (lcp.Retriever)."""

    name = "rag"

    def query_rag(self, query: Any, top_k: int = 5, **kwargs: Any) -> List[dict]:
        """The passages nearest to query: dicts with text, source and score."""
        answer = self._ask("rag.query", {"query": str(query), "top_k": int(top_k), "options": _options(kwargs)})
        return list((answer or {}).get("results") or [])

    query = query_rag

    def add_document_to_rag(self, path: Any, **kwargs: Any) -> Any:
        """Adds a document (a path in the workspace, bytes or a file); returns the store's id for it."""
        name = os.path.basename(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else \
            os.path.basename(str(getattr(path, "name", "") or ""))
        data = _media_bytes(path, "path")
        answer = self._ask("rag.add_document", {"file_name": name, "audio": base64.b64encode(data).decode("ascii"),
                                                "options": _options(kwargs)})
        return (answer or {}).get("id")

    add_document = add_document_to_rag

    def __repr__(self) -> str:
        return "<lcp rag proxy>"


class ToolsProxy(_Bound):
    """client.tools: the host's whole tool inventory."""

    def execute_tool(self, name: Any, params: Any = None, **kwargs: Any) -> Any:
        data, _ = to_json(params if params is not None else {})
        return self._host.request(self._current(), "execute_tool", {"name": str(name)}, data)

    def __repr__(self) -> str:
        return "<lcp tools proxy>"


class ClientProxy(_Bound):
    """lollms_client_instance: a proxy of the host's client.

    llm, tti, tts and stt are the host's models, None when it has none
    (which models the host has beside the LLM is asked once, on first use).
    switch_model, switch_tti, switch_tts and switch_stt choose the model of
    each for the rest of the call.
    """

    _PROXIES = {"tti": TTIProxy, "tts": TTSProxy, "stt": STTProxy, "ttm": TTMProxy, "ttv": TTVProxy,
                "rag": RAGProxy}

    def __init__(self, host: HostChannel, call: Call, has_llm: bool):
        super().__init__(host, call)
        self._models: Dict[str, str] = {}
        self._media: Optional[Dict[str, Any]] = None
        self.llm = LLMProxy(host, call, self._models) if has_llm else None
        self.tools = ToolsProxy(host, call)

    def _modality(self, name: str) -> Any:
        media = self._media
        if media is None:
            try:
                have = self._host.service(self._current(), "client.modalities", None) or {}
            except RuntimeError:
                have = {}  # a host without the service has none of them
            media = {n: (cls(self._host, self._call, self._models) if have.get(n) else None)
                     for n, cls in self._PROXIES.items()}
            self._media = media
        return media[name]

    tti = property(lambda self: self._modality("tti"))
    tts = property(lambda self: self._modality("tts"))
    stt = property(lambda self: self._modality("stt"))
    ttm = property(lambda self: self._modality("ttm"))
    ttv = property(lambda self: self._modality("ttv"))
    rag = property(lambda self: self._modality("rag"))

    def generate_text(self, prompt: Any, n_predict: Optional[int] = None, **kwargs: Any) -> str:
        if self.llm is None:
            raise RuntimeError("Text generation is not available: the host has no LLM binding.")
        return self.llm.generate_text(prompt, n_predict=n_predict, **kwargs)

    generate = generate_text

    def generate_image(self, prompt: Any, negative_prompt: Any = "", width: Optional[int] = None,
                       height: Optional[int] = None, **kwargs: Any) -> MediaBytes:
        tti = self.tti
        if tti is None:
            raise RuntimeError("generate_image is not available: the host has no tti binding.")
        return tti.generate_image(prompt, negative_prompt, width, height, **kwargs)

    def edit_image(self, *args: Any, **kwargs: Any) -> Any:
        tti = self.tti
        if tti is None:
            raise RuntimeError("edit_image is not available: the host has no tti binding.")
        return tti.edit_image(*args, **kwargs)

    def generate_omni(self, *args: Any, **kwargs: Any) -> Any:
        tti = self.tti
        if tti is None:
            raise RuntimeError("generate_omni is not available: the host has no tti binding.")
        return tti.generate(*args, **kwargs)

    def generate_audio(self, text: Any, voice: Optional[str] = None, **kwargs: Any) -> MediaBytes:
        tts = self.tts
        if tts is None:
            raise RuntimeError("generate_audio is not available: the host has no tts binding.")
        return tts.generate_audio(text, voice, **kwargs)

    def transcribe_audio(self, audio_source: Any, model: Optional[str] = None, **kwargs: Any) -> str:
        stt = self.stt
        if stt is None:
            raise RuntimeError("transcribe_audio is not available: the host has no stt binding.")
        return stt.transcribe_audio(audio_source, model, **kwargs)

    def _switch(self, modality: str, present: Any, name: Any) -> bool:
        if present is None:
            raise RuntimeError(f"switch_{'model' if modality == 'llm' else modality} is not available: "
                               f"the host has no {modality} binding.")
        if not isinstance(name, str) or not name.strip():
            raise ValueError("the model to switch to must be a non-empty string (an alias or a model name)")
        self._models[modality] = name.strip()
        return True

    def switch_model(self, model_name: Any) -> bool:
        """Use model_name (a profile's alias, or a model of the endpoint) for text in the rest of the call."""
        return self._switch("llm", self.llm, model_name)

    def switch_tti(self, alias: Any) -> bool:
        return self._switch("tti", self.tti, alias)

    def switch_tts(self, alias: Any) -> bool:
        return self._switch("tts", self.tts, alias)

    def switch_stt(self, alias: Any) -> bool:
        return self._switch("stt", self.stt, alias)

    def switch_ttv(self, alias: Any) -> bool:
        return self._switch("ttv", self.ttv, alias)

    def switch_ttm(self, alias: Any) -> bool:
        return self._switch("ttm", self.ttm, alias)

    def list_models(self) -> List[str]:
        """The models of every modality the host has, as lollms lists them."""
        answer = self._host.service(self._current(), "models.list", {"modality": ""})
        return list((answer or {}).get("models") or [])

    def _need(self, modality: str, what: str) -> Any:
        proxy = self._modality(modality)
        if proxy is None:
            raise RuntimeError(f"{what} is not available: the host has no {modality} binding.")
        return proxy

    def generate_video(self, prompt: Any, **kwargs: Any) -> MediaBytes:
        return self._need("ttv", "generate_video").generate_video(prompt, **kwargs)

    def generate_music(self, prompt: Any = "", **kwargs: Any) -> MediaBytes:
        return self._need("ttm", "generate_music").generate_music(prompt, **kwargs)

    def generate_song(self, prompt: Any = "", lyrics: Any = None, **kwargs: Any) -> MediaBytes:
        return self._need("ttm", "generate_song").generate_song(prompt, lyrics, **kwargs)

    def generate_song_from_lyrics(self, lyrics: Any, prompt: Any = "", **kwargs: Any) -> MediaBytes:
        return self._need("ttm", "generate_song_from_lyrics").generate_song_from_lyrics(lyrics, prompt, **kwargs)

    def query_rag(self, query: Any, top_k: int = 5, **kwargs: Any) -> List[dict]:
        return self._need("rag", "query_rag").query_rag(query, top_k, **kwargs)

    def add_document_to_rag(self, path: Any, **kwargs: Any) -> Any:
        return self._need("rag", "add_document_to_rag").add_document_to_rag(path, **kwargs)

    def __repr__(self) -> str:
        return "<lcp lollms_client_instance proxy>"


class DiscussionProxy(_Bound):
    """discussion_instance: the host's conversation (messages readable)."""

    @property
    def messages(self) -> Any:
        return self._host.request(self._current(), "discussion")

    def get_messages(self) -> Any:
        return self.messages

    def __repr__(self) -> str:
        return "<lcp discussion_instance proxy>"


# ---------------------------------------------------------------------------
# lollms_client.tools_bindings.mcp: MCP servers through the engine's client

MCP_MODULE = "lollms_client.tools_bindings.mcp"
TOOL_NAME_SEPARATOR = "::"


NO_MCP_SERVERS = ("MCP call failed: MCP bridge is not configured. Provide host_tool_configs['mcp_bridge'] "
                  "with a 'servers' list.")


def _mcp_failure(message: str, status_code: int = 500) -> dict:
    return {"success": False, "status_code": status_code, "error": message, "output": message}


def _mcp_warn(message: str) -> None:
    # Goes to the running call's captured stderr: its log, not its result.
    print(f"MCPBinding: {message}", file=sys.stderr)


class MCPBinding:
    """The LCP reference's MCPBinding, on the engine's MCP client.

    MCPBinding(servers=[...]) takes server entries as the LCP host
    configuration writes them ({"alias", "type": "stdio" | "http", "command",
    "args", "env", "cwd", "url", "headers", "timeout"}).  Tools are named
    "alias::tool"; execute_tool returns the LCP result object and never
    raises for a server's failure.  The sessions belong to the engine: one
    per server configuration, shared by every library and call, closed with
    the engine; a server's questions (elicitation) go to whoever the calling
    tool's call asks.
    """

    def __init__(self, servers: Any = None, **kwargs: Any):
        self.binding_name = "mcp"
        self.config = dict(kwargs, servers=servers)
        self._servers: Dict[str, dict] = {}
        self.unavailable: Dict[str, str] = {}
        if servers is None:
            return
        if isinstance(servers, dict) or not isinstance(servers, (list, tuple)):
            _mcp_warn(f"'servers' must be a list of server entries, not {type(servers).__name__}; none added.")
            return
        for entry in servers:
            if not isinstance(entry, dict):
                _mcp_warn(f"a server entry must be a dict, not {type(entry).__name__}; skipped.")
                continue
            alias = entry.get("alias")
            if not isinstance(alias, str) or not alias.strip():
                _mcp_warn(f"a server entry has no alias; skipped: {entry!r}")
                continue
            self._servers[alias.strip()] = dict(entry, alias=alias.strip())

    def add_server(self, alias: str, server_type: str = "stdio", **kwargs: Any) -> bool:
        """Add (or replace) a server entry; the engine validates it on use."""
        if not isinstance(alias, str) or not alias.strip():
            _mcp_warn("a server alias must be a non-empty string.")
            return False
        alias = alias.strip()
        self._servers[alias] = dict(kwargs, alias=alias, type=server_type)
        return True

    def remove_server(self, alias: str, silent: bool = False) -> None:
        """Forget a server entry (the engine's session stays for other users)."""
        if self._servers.pop(alias, None) is None and not silent:
            _mcp_warn(f"server '{alias}' is not configured.")

    def discover_tools(self, specific_tool_names: Optional[List[str]] = None, force_refresh: bool = False,
                       timeout_per_server: float = 10.0, **kwargs: Any) -> List[dict]:
        """The tools of every server, as {"name": "alias::tool", "description", "input_schema"}.

        A server that cannot be reached contributes none: the reason is in
        self.unavailable (alias -> error) and a warning in the call's log.
        The lists follow the servers' own change notifications;
        force_refresh is accepted for compatibility.
        """
        tools: List[dict] = []
        self.unavailable = {}
        for alias, entry in list(self._servers.items()):
            try:
                answer = _host_service("mcp.list", {"server": entry, "timeout": timeout_per_server})
            except (RuntimeError, ValueError) as e:
                self.unavailable[alias] = str(e)
                _mcp_warn(f"server '{alias}' is unavailable: {e}")
                continue
            for t in (answer or {}).get("tools") or []:
                tools.append({"name": f"{alias}{TOOL_NAME_SEPARATOR}{t.get('name')}",
                              "description": t.get("description") or "",
                              "input_schema": t.get("input_schema") or {"type": "object"}})
        if specific_tool_names:
            wanted = set(specific_tool_names)
            tools = [t for t in tools if t["name"] in wanted]
        return tools

    def list_tools(self, **kwargs: Any) -> List[dict]:
        return self.discover_tools(**kwargs)

    def execute_tool(self, tool_name: str, params: Any = None, **kwargs: Any) -> dict:
        """Call "alias::tool" with params (a dict); returns the LCP result object.

        A name the server does not have is tried without its "tool_" prefix
        (the LCP bridge asks for "fs::tool_read_file" when the server's tool
        is "read_file").  timeout= bounds the call in seconds (default 60).
        """
        alias, sep, name = str(tool_name).partition(TOOL_NAME_SEPARATOR)
        if not sep or not alias or not name:
            return _mcp_failure(f"Invalid tool name format: '{tool_name}' (want 'alias{TOOL_NAME_SEPARATOR}tool').", 400)
        entry = self._servers.get(alias)
        if entry is None:
            if not self._servers:
                # The words of the LCP reference's mcp_bridge.py when it has
                # no servers, which that bridge then passes on verbatim.
                return _mcp_failure(NO_MCP_SERVERS, 404)
            return _mcp_failure(f"Server alias '{alias}' is not configured (configured: "
                                f"{', '.join(sorted(self._servers))}).", 404)
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _mcp_failure(f"The parameters of '{tool_name}' must be a dict, not {type(params).__name__}.", 400)
        request: Dict[str, Any] = {"server": entry, "tool": name, "arguments": params}
        timeout = kwargs.get("timeout")
        if timeout is not None:
            request["timeout"] = timeout
        try:
            result = _host_service("mcp.call", request)
        except (RuntimeError, ValueError) as e:
            return _mcp_failure(f"MCP call to '{tool_name}' failed: {e}")
        if not isinstance(result, dict):
            return _mcp_failure(f"MCP call to '{tool_name}' gave no result.")
        return result

    def close(self) -> None:
        """Forget every server entry (the sessions are the engine's)."""
        self._servers.clear()

    def __repr__(self) -> str:
        return f"<lcp MCPBinding servers={sorted(self._servers)}>"


def install_mcp_module() -> None:
    """Register lollms_client.tools_bindings.mcp (once per process)."""
    if MCP_MODULE in sys.modules:
        return
    mod = types.ModuleType(MCP_MODULE, MCPBinding.__doc__)
    MCPBinding.__module__ = MCP_MODULE
    mod.MCPBinding = MCPBinding  # type: ignore[attr-defined]
    mod.BindingName = "MCPBinding"  # type: ignore[attr-defined]
    mod.TOOL_NAME_SEPARATOR = TOOL_NAME_SEPARATOR  # type: ignore[attr-defined]
    sys.modules[MCP_MODULE] = mod


# ---------------------------------------------------------------------------
# Loading the library (SPEC section 8)


class LibraryLoader:
    """Imports the library's module once and keeps its handler hooks current.

    ``_load_lock`` makes concurrent first calls share one load;
    ``_hooks_lock`` serializes changes of the handlers the module was given.
    """

    def __init__(self, spec: LibrarySpec, confirm: ConfirmHandlerProxy,
                 interact: InteractionHandlerProxy, diag: Callable[[str, str], None]):
        self.spec = spec
        self.module: Optional[types.ModuleType] = None
        self.applied = Handlers()
        self._confirm = confirm
        self._interact = interact
        self._diag = diag
        self._load_lock = threading.Lock()
        self._hooks_lock = threading.Lock()
        self._parents_ready = False
        self._plans: Dict[str, Tuple[Callable, CallPlan]] = {}

    def ensure_loaded(self, config: Any, handlers: Handlers
                      ) -> Tuple[Optional[types.ModuleType], Optional[ExceptionInfo]]:
        """The module, loading it on first use (a failure is retried next time)."""
        mod = self.module
        if mod is not None:
            return mod, None
        with self._load_lock:
            if self.module is not None:
                return self.module, None
            name = MODULE_PREFIX + self.spec.stem
            self._ensure_parent_packages()
            mod = None
            try:
                mod = self._import(name)
                self._init_module(mod, config, handlers)
            except CallCancelled:
                if sys.modules.get(name) is mod:
                    del sys.modules[name]
                raise
            except BaseException as e:
                if mod is not None and sys.modules.get(name) is mod:
                    del sys.modules[name]
                return None, describe_exception(e)
            self._plans.clear()
            self.module = mod
            return mod, None

    def _import(self, name: str) -> types.ModuleType:
        if self.spec.code:
            mod = types.ModuleType(name)
            mod.__file__ = self.spec.path
            sys.modules[name] = mod
            exec(compile(self.spec.code, self.spec.path or "<lcp-code>", "exec"), mod.__dict__)
            return mod
        # Deferred: only file libraries need importlib.util.
        import importlib.util

        d = os.path.dirname(self.spec.path)
        if d and d not in sys.path:
            sys.path.insert(0, d)
        spec = importlib.util.spec_from_file_location(name, self.spec.path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load a module from {self.spec.path!r}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    def _ensure_parent_packages(self) -> None:
        """Make lollms_client.tools_bindings.lcp and .mcp importable.

        pickle (multiprocessing, process pools) imports a function's module
        by name, parents first.  Without the real lollms_client package,
        stub packages stand in for the parents; with it, it is left alone.
        lollms_client.tools_bindings.mcp is always the worker's own
        (MCPBinding on the engine's MCP client), installed by its full name
        so that importing it never runs the real package.
        """
        if self._parents_ready:
            return
        self._parents_ready = True
        install_mcp_module()
        # Deferred: needed once, at the first load.
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
                pkg.__path__ = []  # type: ignore[attr-defined]
                sys.modules[name] = pkg
                if parent is not None:
                    setattr(parent, name.rsplit(".", 1)[1], pkg)
            parent = sys.modules[name]
        setattr(sys.modules["lollms_client.tools_bindings"], "mcp", sys.modules[MCP_MODULE])

    def _init_module(self, mod: types.ModuleType, config: Any, handlers: Handlers) -> None:
        cfg = dict(config) if isinstance(config, dict) else {}
        if handlers.confirm:
            cfg.setdefault("confirm_handler", self._confirm)
        if handlers.interact:
            cfg.setdefault("user_interaction_handler", self._interact)
        if handlers.confirm:
            self._call_hook(mod, "set_confirm_handler", self._confirm)
        if handlers.interact:
            self._call_hook(mod, "set_user_interaction_handler", self._interact)
        init = getattr(mod, "init_tools_library", None)
        if callable(init):
            if accepts_positional(init):
                init(cfg)
            else:
                init()
        self.applied = handlers

    @staticmethod
    def _call_hook(mod: types.ModuleType, name: str, value: Any) -> bool:
        hook = getattr(mod, name, None)
        if callable(hook):
            hook(value)
            return True
        return False

    def before_call(self, handlers: Handlers) -> None:
        """Per call: follow handler changes, and give the interaction handler
        again (SPEC section 8)."""
        if handlers != self.applied:
            self.apply_handlers(handlers)
        if handlers.interact and self.module is not None:
            self._call_hook(self.module, "set_user_interaction_handler", self._interact)

    def apply_handlers(self, handlers: Handlers) -> None:
        """Re-invoke the hooks of the loaded module after a change of handlers."""
        with self._hooks_lock:
            mod = self.module
            old = self.applied
            if mod is None or handlers == old:
                return
            self.applied = handlers
            for want, had, setter, attr, proxy in (
                    (handlers.confirm, old.confirm, "set_confirm_handler", "_CONFIRM_HANDLER", self._confirm),
                    (handlers.interact, old.interact, "set_user_interaction_handler",
                     "_USER_INTERACTION_HANDLER", self._interact)):
                if want == had:
                    continue
                value = proxy if want else None
                if not self._call_hook(mod, setter, value) and hasattr(mod, attr):
                    setattr(mod, attr, value)

    def apply_handlers_safely(self, handlers: Handlers) -> None:
        try:
            self.apply_handlers(handlers)
        except BaseException as e:
            info = describe_exception(e)
            self._diag("warn", f"handler hook failed: {info.type}: {info.message}")

    def functions(self) -> List[str]:
        """The module's callable tool_* attributes, in definition order."""
        assert self.module is not None
        return [k for k, v in list(vars(self.module).items()) if k.startswith("tool_") and callable(v)]

    def plan(self, name: str) -> Optional[Tuple[Callable, CallPlan]]:
        """The function and its call plan, or None when it is not a module-level callable."""
        fn = getattr(self.module, name, None) if name else None
        if fn is None or not callable(fn):
            return None
        cached = self._plans.get(name)
        if cached is None or cached[0] is not fn:
            cached = (fn, CallPlan(fn))
            self._plans[name] = cached
        return cached


# ---------------------------------------------------------------------------
# Running a call (SPEC section 7, steps 5-8)


class CallRunner:
    """Runs calls: load, filter and inject, call, convert the value."""

    def __init__(self, worker: Worker):
        self._loader = worker.library
        self._host = worker.host
        self._max_result = worker.config.max_result
        self._injectors: Dict[str, Callable[[Call], Any]] = {
            "tool_context": lambda call: call.request.context,
            "lollms_client_instance": lambda call: ClientProxy(self._host, call, call.request.has_llm),
            "discussion_instance": lambda call: (DiscussionProxy(self._host, call)
                                                 if call.request.has_discussion else None),
            "user_interaction_handler": lambda call: (worker.interact_proxy
                                                      if call.request.handlers.interact else None),
            "progress_handler": ProgressHandler,
            "log_handler": LogHandler,
        }

    def run(self, call: Call) -> Outcome:
        req = call.request
        if not isinstance(req.args, dict):
            return Outcome(internal=ExceptionInfo("TypeError", "arguments must be a JSON object", ""))
        loader = self._loader
        mod = loader.module
        if mod is None or req.op == "load":
            _, load_error = loader.ensure_loaded(req.config, req.handlers)
            if load_error is not None:
                return Outcome(load_error=load_error)
            if req.op == "load":
                return Outcome(functions=loader.functions())
        handlers = req.handlers
        if handlers.interact or handlers != loader.applied:  # what before_call acts on
            try:
                loader.before_call(handlers)
            except CallCancelled:
                raise
            except BaseException as e:
                return Outcome(exception=describe_exception(e))
        found = loader.plan(req.function)
        if found is None:
            return Outcome(not_module_level=True)
        fn, plan = found
        if plan.inject:
            injectors = self._injectors
            positional, kwargs = plan.bind(req.args, lambda name: injectors[name](call))
        else:
            positional, kwargs = plan.bind(req.args, None)
        try:
            value = fn(*positional, **kwargs)
            if _is_coroutine(value):
                value = self._run_coroutine(call, value)
        except BaseException as e:
            if call.cancel_requested:
                raise CallCancelled() from None
            return Outcome(exception=describe_exception(e))
        finally:
            # Big arguments can go before the value is converted.
            positional = kwargs = None  # type: ignore[assignment]
        try:
            data, notes = to_json(value)
        except ConversionError as e:
            return Outcome(exception=ExceptionInfo("ValueError", str(e), ""))
        except MemoryError as e:
            return Outcome(exception=describe_exception(e))
        value = None  # and a big value before its JSON is sent
        if len(data) > self._max_result:
            return Outcome(too_large=len(data))
        return Outcome.of_value(data) if notes is None else Outcome(value=data, converted=notes)

    @staticmethod
    def _run_coroutine(call: Call, coro: Any) -> Any:
        # Deferred: asyncio costs tens of milliseconds at start-up; only
        # async tools need it.
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


# ---------------------------------------------------------------------------
# Calls in flight and their cancellation


class CallRegistry:
    """The calls in flight, by id.

    A cancellation can overtake its call (they come on different pipes): it
    is kept until the call arrives, for a while.
    """

    EARLY_CANCEL_TTL = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: Dict[int, Call] = {}
        self._early: Dict[int, float] = {}

    def add(self, call: Call) -> None:
        with self._lock:
            self._calls[call.id] = call
            if self._early and self._early.pop(call.id, None) is not None:
                call.cancel_requested = True

    def remove(self, call: Call) -> None:
        with self._lock:
            self._calls.pop(call.id, None)

    def idle(self) -> bool:
        return not self._calls

    def only(self) -> Optional[Call]:
        """The call in flight when there is exactly one."""
        with self._lock:
            if len(self._calls) == 1:
                return next(iter(self._calls.values()))
        return None

    def claim_cancel(self, call_id: Any) -> Optional[Call]:
        """The call to cancel; a cancellation that came first is remembered."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None and isinstance(call_id, int):
                now = time.monotonic()
                if len(self._early) > 256:
                    self._early = {k: t for k, t in self._early.items()
                                   if now - t < self.EARLY_CANCEL_TTL}
                self._early[call_id] = now
            return call


def cancel_call(call: Call) -> None:
    """Stop a running call: raise in its thread, wake its host requests,
    cancel its asyncio task."""
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


# ---------------------------------------------------------------------------
# Serving


class AdaptiveSpin:
    """Brief polling of the call pipe before parking in a blocking read.

    Waking a thread that sleeps in read() costs tens of microseconds on an
    idle virtual CPU, more than a whole warm call; a worker that has just
    answered often gets its next call within microseconds (an agent or a
    client calling in a loop).  So it polls the pipe for up to BUDGET after
    a reply, but only while the recent gaps between a reply and the next
    call were short (a moving average, each gap clipped so that one long
    pause does not stop spinning for long), not for a while after spins
    that found nothing or lost the CPU, never while other calls run (they
    need the CPU and the GIL), and never on a single CPU.  It yields the CPU
    between polls, so that it costs little to whoever else needs it.

    The same polls watch the standard descriptors (see watch_std), so that
    a spin also does the check that follows every call.
    """

    BUDGET = 250e-6
    CLIP = 4 * BUDGET
    PREEMPTED = 50e-6  # a gap between two polls that shows the CPU was taken

    def __init__(self, fd: int):
        self._fd = fd
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._std = False
        self._avg = self.BUDGET
        self._replied: Optional[float] = None
        self._misses = 0  # spins in a row that found nothing
        self._skip = 0  # replies left after which it does not spin
        self._cpus = _cpus()
        self._busy_avg = 0.0
        self._busy_at = 0.0
        self.enabled = self._cpus > 1 and hasattr(os, "sched_yield")

    def watch_std(self, fds: Tuple[int, ...]) -> None:
        """Also poll fds (with no events: a closed one reports POLLNVAL)."""
        for fd in fds:
            self._poll.register(fd, 0)
        self._std = bool(fds)

    def replied(self) -> None:
        self._replied = time.perf_counter()

    def wait(self) -> bool:
        """Poll the pipe briefly if calls have been coming in quick succession.

        Reports whether it polled the standard descriptors (watch_std) and
        found them open: if not, the caller checks them itself.
        """
        if not self.enabled or self._replied is None or self._avg >= self.BUDGET:
            return False
        if self._skip:
            self._skip -= 1
            return False
        if self._cpu_busy():
            return False
        deadline = self._replied + self.BUDGET
        poll, clock, yield_cpu = self._poll.poll, time.perf_counter, os.sched_yield
        last = clock()
        while True:
            ready = poll(0)
            if ready:
                break
            now = clock()
            if now >= deadline or now - last > self.PREEMPTED:
                # Nothing came, or the CPU is wanted elsewhere (a thread
                # that yielded gets it back later than one that wakes):
                # the next 2, 4, ... 256 replies park at once.
                self._misses = min(self._misses + 1, 8)
                self._skip = 1 << self._misses
                return self._std
            last = now
            yield_cpu()
        self._misses = 0
        # Only the call pipe, readable: the standard descriptors are open.
        return self._std and len(ready) == 1 and ready[0][0] == self._fd

    BUSY = 0.75  # threads waiting for a CPU, on average, from which it is busy

    def _cpu_busy(self) -> bool:
        """Whether threads wait for a CPU.

        From the kernel's count of runnable threads in /proc/loadavg, read
        at most every 10 ms: where threads wait for a CPU, polling takes it
        from them (and waking is fast anyway: no CPU is idle).  One reading
        is of one instant, and this thread and the engine's run at once, so
        that any third thread tips a two-CPU machine over: the threads over
        the CPUs are averaged (a weight of 1/4 per reading), as the engine
        does, and it is busy once about one waits on average.
        """
        now = time.monotonic()
        if now - self._busy_at > 0.01:
            self._busy_at = now
            over = max(_runnable_threads() - self._cpus, 0)
            self._busy_avg += (over - self._busy_avg) / 4
        return self._busy_avg >= self.BUSY

    def arrived(self) -> None:
        """Note the arrival of a call (the gap since the last reply)."""
        if self._replied is not None:
            gap = min(time.perf_counter() - self._replied, self.CLIP)
            self._avg += (gap - self._avg) / 4
            self._replied = None


def _runnable_threads() -> int:
    """The runnable threads of the machine (Linux), or 0 when unknown."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return 0


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ExecutorPool:
    """Threads that run calls which overlap another call.

    Idle threads wait on one queue; a call finds one, or starts one.  A
    failure outside a tool's code ends the worker through guard (a call
    whose result is never sent would wait forever).
    """

    MAX_IDLE = 8

    def __init__(self, run: Callable[[Call], None], guard: Callable[[Callable[[], None]], None]):
        self._run = run
        self._guard = guard
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, call: Call) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        self._queue.put(call)
        if start:
            threading.Thread(target=self._guard, args=(self._loop,), daemon=True, name="lcp-call").start()

    def _loop(self) -> None:
        while True:
            call = self._queue.get()
            self._run(call)
            with self._lock:
                if self._idle >= self.MAX_IDLE:
                    return
                self._idle += 1


class Worker:
    """Serves one library in one workspace over the protocol pipes.

    Threads: the calls thread reads the call pipe and runs what it reads;
    the thread that calls serve() reads the side pipe (cancellations,
    answers, handler changes, overlapping calls, which go to the executor
    pool); the flusher sends waiting events.
    """

    def __init__(self, config: WorkerConfig, call_fd: int = CALL_FD, side_fd: int = SIDE_FD,
                 reply_fd: int = REPLY_FD, out_fd: int = 1, err_fd: int = 2,
                 exit_on_eof: bool = True):
        global _active_worker
        self.config = config
        self.call_fd = call_fd
        self.side_fd = side_fd
        self.out_fd = out_fd
        self.err_fd = err_fd
        self.exit_on_eof = exit_on_eof
        self.out = FrameWriter(reply_fd)
        self.calls = CallRegistry()
        self.host = HostChannel(self.out, config.max_result)
        self.confirm_proxy = ConfirmHandlerProxy(self.host)
        self.interact_proxy = InteractionHandlerProxy(self.host)
        self.library = LibraryLoader(config.library, self.confirm_proxy, self.interact_proxy, self.diag)
        self.runner = CallRunner(self)
        self.flusher = EventFlusher()
        self.executors = ExecutorPool(self.run_call, self._guarded)
        self.spin = AdaptiveSpin(call_fd)
        self.code_frame: Optional[bytes] = None
        self._saved_fds: Tuple[Tuple[int, int], ...] = ()
        self._std_poll: Optional[Any] = None
        self._done = threading.Event()
        # One worker per process: current_call() finds it here for threads
        # that belong to no call.
        _active_worker = self

    # -- process set-up ------------------------------------------------------

    def install_process_hooks(self) -> None:
        """Keep the protocol pipes out of the tools' child processes."""
        fds = (self.call_fd, self.side_fd, self.out.fd)
        for fd in fds:
            try:
                os.set_inheritable(fd, False)
            except OSError:
                pass
        out = self.out

        def after_fork_in_child() -> None:
            out.disabled = True
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            # The child cannot speak the protocol: what it prints goes to
            # fds 1 and 2, which the engine drains.
            sys.stdout = sys.__stdout__
            sys.stderr = sys.__stderr__

        os.register_at_fork(after_in_child=after_fork_in_child)

    def install_streams(self) -> None:
        saved_out = os.dup(self.out_fd)
        saved_err = os.dup(self.err_fd)
        self._saved_fds = ((self.out_fd, saved_out), (self.err_fd, saved_err))
        if hasattr(select, "poll"):
            # One poll(2) with no events asked reports POLLNVAL for a closed
            # descriptor: the check after every call is one system call for
            # both descriptors.
            p = select.poll()
            for fd, _ in self._saved_fds:
                p.register(fd, 0)
            self._std_poll = p
            self.spin.watch_std(tuple(fd for fd, _ in self._saved_fds))
        sys.stdout = RoutedStream("stdout", 0, saved_out)  # type: ignore[assignment]
        sys.stderr = RoutedStream("stderr", 1, saved_err)  # type: ignore[assignment]
        _install_thread_inheritance()

    # -- frames out ----------------------------------------------------------

    def diag(self, level: str, msg: str) -> None:
        """A diagnostic of the worker itself, for the engine's log."""
        self.out.send({"type": "diag", "level": level, "msg": msg})

    def fatal(self, message: str) -> None:
        """Report an internal failure and exit (the engine sees a crash)."""
        try:
            self.out.send({"type": "fatal", "error": message})
        except BaseException:
            pass
        os._exit(70)

    # -- serving -------------------------------------------------------------

    def serve(self) -> None:
        """Say hello, then serve until the engine closes the pipes."""
        threading.Thread(target=self.flusher.run, daemon=True, name="lcp-flush").start()
        v = sys.version_info
        self.out.send({"type": "hello", "protocol": PROTOCOL_VERSION,
                       "python": f"{v.major}.{v.minor}.{v.micro}", "pid": os.getpid()})
        if self.code_frame:
            self.out.send({"type": "code"}, self.code_frame)
            self.code_frame = None
        threading.Thread(target=self._guarded, args=(self._serve_calls,), daemon=True,
                         name="lcp-calls").start()
        self._guarded(self._serve_side)
        self._done.wait()

    def _guarded(self, loop: Callable[[], None]) -> None:
        try:
            loop()
        except ProtocolViolation as e:
            self.fatal(f"protocol violation on the engine's pipe: {e}")
        except BaseException:
            # The worker itself is broken: it cannot serve any more.
            self.fatal(traceback.format_exc())

    def _closed(self) -> None:
        # The engine closed a pipe (or is gone): stop now, without waiting
        # for tool threads.
        if self.exit_on_eof:
            os._exit(0)
        self._done.set()

    def _serve_calls(self) -> None:
        """Read the call pipe and run each call in this thread."""
        reader = FrameReader(self.call_fd)
        spin = self.spin
        while True:
            msg = reader.read()
            if msg is None:
                return self._closed()
            spin.arrived()
            call = self._call_from(msg)
            self.run_call(call, repair=False)
            spin.replied()
            # The check after every call (run_call's repair), done by the
            # spin's polls when it spins.
            if reader.buffered() or not self.calls.idle() or not spin.wait():
                self._repair_std_fds()

    def _serve_side(self) -> None:
        """Read the side pipe: cancellations, answers, handlers, overlapping calls."""
        reader = FrameReader(self.side_fd)
        while True:
            msg = reader.read()
            if msg is None:
                return self._closed()
            kind = msg["type"]
            if kind == "cancel":
                call = self.calls.claim_cancel(msg.get("id"))
                if call is not None:
                    cancel_call(call)
            elif kind == "answer":
                self.host.answer(msg.get("rid"), msg.get("value"))
            elif kind == "handlers":
                handlers = Handlers(bool(msg.get("confirm")), bool(msg.get("interact")))
                threading.Thread(target=self.library.apply_handlers_safely, args=(handlers,),
                                 daemon=True, name="lcp-hooks").start()
            else:
                self.executors.submit(self._call_from(msg))

    def _call_from(self, msg: dict) -> Call:
        if msg["type"] not in ("call", "load"):
            raise ProtocolViolation(f"a frame of unknown type {msg['type']!r}")
        call = Call(self, CallRequest.from_frame(msg))
        self.calls.add(call)
        return call

    # -- running a call ------------------------------------------------------

    def run_call(self, call: Call, repair: bool = True) -> None:
        """Run call in this thread and send its result.

        Then the standard descriptors are repaired, unless repair is false:
        the calls thread checks them itself, while it waits for the next
        call (see AdaptiveSpin.wait).
        """
        thread = threading.current_thread()
        thread._lcp_call = call  # type: ignore[attr-defined]
        outcome: Optional[Outcome] = None
        try:
            with call.lock:
                call.tid = threading.get_ident()
                skip = call.cancel_requested
            if not skip:
                outcome = self.runner.run(call)
        except CallCancelled:
            outcome = None
        except BaseException as e:
            outcome = Outcome(internal=describe_exception(e))
        cancelled = self._finish(call)
        thread._lcp_call = None  # type: ignore[attr-defined]
        self._send_result(call, outcome, cancelled)
        # After the result, which need not wait for it: the call's output
        # went out with close_events, and the next call runs after this.
        if repair:
            self._repair_std_fds()

    def _finish(self, call: Call) -> bool:
        """Mark the call finished; report whether it was cancelled."""
        # A CallCancelled scheduled just before the call is marked finished
        # may fire anywhere in here; retry until the call is marked and
        # nothing is pending any more.
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
        self.calls.remove(call)
        if call._events is not None:
            try:
                call.close_events()
            except Exception:
                pass
        return cancelled

    def _send_result(self, call: Call, outcome: Optional[Outcome], cancelled: bool) -> None:
        if cancelled:
            self.out.send({"type": "result", "id": call.id, "cancelled": True})
        elif outcome is None:
            self.out.send(Outcome(internal=ExceptionInfo(
                "RuntimeError", "call ended without a result", "")).header(call.id))
        elif outcome.value is not None and not outcome.converted:
            self.out.send_value(call.id, outcome.value)
        else:
            self.out.send(outcome.header(call.id), outcome.value)

    def _repair_std_fds(self) -> None:
        # A tool that closed fd 1 or 2 must not silence the next one.  It is
        # checked after every call (a tool can close them at any time), with
        # one poll(2) when nothing is amiss.
        p = self._std_poll
        if p is not None:
            try:
                if not p.poll(0):
                    return
            except (OSError, RuntimeError):
                pass  # RuntimeError: another call's thread polls it now
        for fd, saved in self._saved_fds:
            try:
                os.get_inheritable(fd)  # the cheapest call that fails on a closed fd
            except OSError:
                try:
                    os.dup2(saved, fd)
                except OSError:
                    pass


# ---------------------------------------------------------------------------
# Process setup


def _prctl(option: int, arg: Any) -> None:
    if not _LINUX:
        return
    try:
        # Deferred: ctypes is only needed for the few prctl calls at start.
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)
    except Exception:
        pass


def _descendants(root: int) -> List[int]:
    """Pids of live processes below root, from /proc (Linux)."""
    children: Dict[int, List[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
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


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return


def _kill_group(pgid: int) -> None:
    # Deferred with the other process-control modules.
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def guardian_main(worker_pid: int, status_fd: int) -> None:
    """Wait for the worker; then clean up below us and report its status."""
    import signal

    def on_term(signum: int, frame: Any) -> None:
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
    report: Dict[str, int] = {}
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


def worker_setup(config: WorkerConfig, guardian_pid: int) -> None:
    """Process-level setup of the worker (after the fork)."""
    # Only the worker process needs these; the guardian stays lean.
    import faulthandler
    import resource
    import signal

    os.setpgid(0, 0)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != guardian_pid:
        os._exit(0)
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    except (ValueError, OSError):
        pass
    if config.memory_limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (config.memory_limit, config.memory_limit))
    # A signal to the worker must not corrupt a frame being read.
    signal.signal(signal.SIGINT, lambda s, f: None)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    try:
        errfile = os.fdopen(os.dup(2), "w")
        faulthandler.enable(file=errfile, all_threads=False)
    except Exception:
        pass


def _set_name(name: bytes) -> None:
    # The name ps -o comm and top show (Linux).
    if _LINUX:
        try:
            # Deferred like in _prctl.
            import ctypes

            ctypes.CDLL(None).prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)
        except Exception:
            pass


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _extend_path(environ: Dict[str, str]) -> None:
    """Add the user's PYTHONPATH and user site-packages after start-up.

    The engine starts the interpreter isolated (``-I``): neither the working
    folder (the workspace), nor PYTHONPATH, nor the user's site-packages was
    on sys.path while this program and its standard modules were imported,
    so nothing a tool wrote into the workspace could run.  The folders the
    user asked for are added now, after the standard library's entries so
    that they cannot shadow it, and never when they lie inside the
    workspace or are relative (relative entries name the workspace).
    """
    if environ.get("PYTHONDONTWRITEBYTECODE"):
        sys.dont_write_bytecode = True
    # Whatever an old engine or -c left at the front names the workspace.
    while sys.path and sys.path[0] in ("", "."):
        sys.path.pop(0)
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = ""

    def allowed(d: str) -> bool:
        if not d or not os.path.isabs(d):
            return False
        return not (cwd and _inside(os.path.realpath(d), cwd))

    at = len(sys.path)
    for i, d in enumerate(sys.path):
        if os.path.basename(d) in ("site-packages", "dist-packages"):
            at = i
            break
    extra = [d for d in environ.get("PYTHONPATH", "").split(os.pathsep) if allowed(d)]
    # As site does: no user site for a process whose ids were changed.
    same_ids = not hasattr(os, "geteuid") or (os.geteuid() == os.getuid() and os.getegid() == os.getgid())
    if not environ.get("PYTHONNOUSERSITE") and same_ids:
        import site

        user = site.getusersitepackages()
        if isinstance(user, str) and allowed(user) and os.path.isdir(user):
            before = list(sys.path)
            site.addsitedir(user)
            added = [d for d in sys.path if d not in before]
            sys.path[:] = before
            extra.extend(added)
    seen = set(sys.path)
    for d in extra:
        if d not in seen:
            seen.add(d)
            sys.path.insert(at, d)
            at += 1


def _read_exact(fd: int, n: int) -> Optional[bytes]:
    chunks = []
    while n > 0:
        b = os.read(fd, n)
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_start_frame(fd: int) -> Optional[WorkerConfig]:
    """The engine's start-up frame, read exactly (nothing after it is consumed)."""
    head = _read_exact(fd, _PREFIX.size)
    if head is None:
        return None
    magic, n, crc = _PREFIX.unpack(head)
    body = _read_exact(fd, n) if magic == FRAME_MAGIC and n <= MAX_FRAME else None
    if body is None or zlib.crc32(body) != crc:
        return None
    return WorkerConfig.from_json(json.loads(body))


def main() -> None:
    """Entry point called by the bootstrap (guardian, then worker)."""
    _extend_path(dict(os.environ))
    config = read_start_frame(CALL_FD)
    if config is None:
        os._exit(0)
    guardian = os.getpid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    pid = os.fork()
    if pid != 0:
        for fd in (CALL_FD, REPLY_FD, SIDE_FD):
            os.close(fd)
        _set_name(b"lcp-guardian")
        guardian_main(pid, STATUS_FD)
        return
    try:
        os.close(STATUS_FD)
        _set_name(b"lcp-worker")
        worker_setup(config, guardian)
        w = Worker(config)
        w.install_process_hooks()
        w.install_streams()
        code = globals().get("_LCP_CODE")
        if config.want_code and code is not None:
            # The engine keeps the compiled program for its next workers.
            import marshal
            from importlib.util import MAGIC_NUMBER

            w.code_frame = MAGIC_NUMBER + marshal.dumps(code)
        w.serve()
    except BaseException:
        try:
            write_all(REPLY_FD, encode_frame({"type": "fatal", "error": traceback.format_exc()}))
        except BaseException:
            pass
        os._exit(70)
    os._exit(0)
