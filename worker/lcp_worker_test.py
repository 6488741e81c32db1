"""Unit tests of lcp_worker.py, run on their own: python3 -m unittest lcp_worker_test.

The Go test TestPythonUnit runs them too.
"""

import asyncio
import json
import os
import struct
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lcp_worker as w  # noqa: E402


class Thing:
    def __repr__(self):
        return "<Thing>"


class ToJSONTest(unittest.TestCase):
    def check(self, value, want, notes=None):
        data, got_notes = w.to_json(value)
        self.assertEqual(json.loads(data), want)
        self.assertEqual(None if got_notes is None else [n.to_json() for n in got_notes], notes)

    def test_plain(self):
        self.check({"a": [1, 2.5, None, True, "x"]}, {"a": [1, 2.5, None, True, "x"]})
        self.check((1, (2, 3)), [1, [2, 3]])
        self.check(2 ** 100, 2 ** 100)

    def test_bytes(self):
        self.check(b"\x00\xffhi", "AP9oaQ==", [{"path": "", "from": "bytes", "to": "base64"}])
        self.check({"o": {"a/b": bytearray(b"ab")}}, {"o": {"a/b": "YWI="}},
                   [{"path": "/o/a~1b", "from": "bytes", "to": "base64"}])
        self.check([b"x"], ["eA=="], [{"path": "/0", "from": "bytes", "to": "base64"}])

    def test_sets(self):
        self.check({3, 1, 2}, [1, 2, 3])
        self.check({1, "a"}, ["a", 1])
        self.check([frozenset({"y", "x"})], [["x", "y"]])

    def test_floats_and_keys(self):
        self.check([float("inf"), float("-inf"), float("nan")], ["inf", "-inf", "nan"])
        self.check({1: "a", 2.5: "b", None: "d", (1, 2): "e", "s": {True: "t"}, float("inf"): "i"},
                   {"1": "a", "2.5": "b", "null": "d", "(1, 2)": "e", "s": {"true": "t"}, "Infinity": "i"})

    def test_objects(self):
        self.check(Thing(), "<Thing>")
        self.check({"t": Thing(), "b": b""}, {"t": "<Thing>", "b": ""},
                   [{"path": "/b", "from": "bytes", "to": "base64"}])

    def test_cycle(self):
        a = []
        a.append(a)
        a.append(b"")
        data, _ = w.to_json(a)
        self.assertEqual(json.loads(data), ["<circular reference>", ""])

    def test_lone_surrogate(self):
        data, _ = w.to_json("a\ud800b")
        self.assertEqual(data, b'"a\\ud800b"')

    def test_too_deep(self):
        v = []
        for _ in range(100000):
            v = [v, b""]
        with self.assertRaises(w.ConversionError):
            w.to_json(v)


class CallPlanTest(unittest.TestCase):
    def bind(self, fn, args):
        return w.CallPlan(fn).bind(args, lambda name: f"<{name}>")

    def test_filtering(self):
        def f(a, b=2, *, c):
            pass
        self.assertEqual(self.bind(f, {"a": 1, "c": 3, "zz": 9}), ([], {"a": 1, "c": 3}))

    def test_kwargs_pass_all_and_inject(self):
        def f(a, **kw):
            pass
        pos, kw = self.bind(f, {"a": 1, "zz": 9})
        self.assertEqual(pos, [])
        self.assertEqual(kw["zz"], 9)
        self.assertEqual(kw["tool_context"], "<tool_context>")
        # The event handlers are not given through **kwargs.
        self.assertEqual(sorted(kw), ["a", "discussion_instance", "lollms_client_instance",
                                      "tool_context", "user_interaction_handler", "zz"])

    def test_injection_only_declared(self):
        def f(x, tool_context=None):
            pass
        self.assertEqual(self.bind(f, {"x": 1}), ([], {"x": 1, "tool_context": "<tool_context>"}))

    def test_event_handlers_declared(self):
        def f(x, progress_handler=None, *, log_handler=None, **kw):
            pass
        _, kw = self.bind(f, {"x": 1})
        self.assertEqual(kw["progress_handler"], "<progress_handler>")
        self.assertEqual(kw["log_handler"], "<log_handler>")

    def test_positional_only(self):
        def f(a, b=2, /, c=3):
            pass
        self.assertEqual(self.bind(f, {"a": 1, "b": 5, "c": 6}), ([1, 5], {"c": 6}))
        self.assertEqual(self.bind(f, {"b": 5}), ([], {"b": 5}))

    def test_var_positional_is_not_a_name(self):
        def f(*items):
            pass
        self.assertEqual(self.bind(f, {"items": [1]}), ([], {}))

    def test_accepts_positional(self):
        self.assertTrue(w.accepts_positional(lambda config: None))
        self.assertTrue(w.accepts_positional(lambda *a: None))
        self.assertFalse(w.accepts_positional(lambda: None))
        self.assertFalse(w.accepts_positional(lambda *, config=None: None))


class ExceptionTest(unittest.TestCase):
    def test_describe(self):
        try:
            raise KeyError("k")
        except KeyError as e:
            d = w.describe_exception(e)
        self.assertEqual(d.type, "KeyError")
        self.assertEqual(d.message, "'k'")
        self.assertTrue(d.traceback.startswith("Traceback (most recent call last):\n"))
        self.assertTrue(d.traceback.endswith("KeyError: 'k'\n"))
        self.assertEqual(sorted(d.to_json()), ["message", "traceback", "type"])

    def test_empty_message(self):
        d = w.describe_exception(SystemExit())
        self.assertEqual((d.type, d.message), ("SystemExit", ""))


class FrameTest(unittest.TestCase):
    def pipe_with(self, data):
        r, wfd = os.pipe()
        os.write(wfd, data)
        os.close(wfd)
        self.addCleanup(os.close, r)
        return w.FrameReader(r)

    def test_round_trip(self):
        data = w.encode_frame({"type": "x", "n": 1}, b'{"raw":\n1}')
        magic, n, crc = struct.unpack(">4sII", data[:12])
        self.assertEqual((magic, n, crc), (b"LCP2", len(data) - 12, zlib.crc32(data[12:])))
        header, payload = w.split_frame(data[12:])
        self.assertEqual(header, {"type": "x", "n": 1})
        self.assertEqual(payload, b'{"raw":\n1}')

    def test_reader(self):
        frames = w.encode_frame({"type": "call", "id": 1}) + w.encode_frame({"type": "cancel", "id": 1})
        r = self.pipe_with(frames)
        self.assertEqual(r.read(), {"type": "call", "id": 1})
        self.assertEqual(r.read(), {"type": "cancel", "id": 1})
        self.assertIsNone(r.read())

    def test_violations(self):
        good = w.encode_frame({"type": "call", "id": 1})
        for name, data in (("junk", b"junk and more junk"),
                           ("checksum", good[:-2] + b"x}"),
                           ("too large", struct.pack(">4sII", b"LCP2", w.MAX_FRAME + 1, 0)),
                           ("not an object", w.encode_frame({"type": "x"})[:12 - 8] +
                            struct.pack(">II", 2, zlib.crc32(b"[]")) + b"[]")):
            with self.subTest(name):
                with self.assertRaises(w.ProtocolViolation):
                    self.pipe_with(data).read()

    def test_send_value(self):
        r, wfd = os.pipe()
        self.addCleanup(os.close, r)
        out = w.FrameWriter(wfd)
        out.send_value(5, b'{"a":1}')
        os.close(wfd)
        body = w.FrameReader(r).read_body()
        self.assertEqual(w.split_frame(body), ({"type": "result", "id": 5}, b'{"a":1}'))


LIB = '''
import asyncio, sys, threading, time
N = 0
OUT = sys.stdout

def tool_inc(step: int = 1):
    global N
    N += step
    return N

def tool_ask(user_interaction_handler=None):
    return user_interaction_handler({'type': 'text'})

async def tool_async():
    await asyncio.sleep(0)
    return b'ok'

def tool_sleep(seconds: float = 10):
    time.sleep(seconds)
    return "slept"

def tool_loop():
    while True:
        pass

def tool_print(n: int = 3):
    for i in range(n):
        print("line", i, file=OUT)
    t = threading.Thread(target=lambda: print("from a thread", file=OUT))
    t.start()
    t.join()
    return "printed"

def tool_progress(progress_handler, n: int = 1000):
    for i in range(n):
        progress_handler(i + 1, total=n, message=f"step {i + 1}")
    return "done"

def tool_log(log_handler, n: int = 3):
    for i in range(n):
        log_handler(f"record {i}", level="warning" if i else "info", data={"i": i, "b": b"x"} if i == 1 else None)
    return "logged"

def tool_bad_level(log_handler):
    log_handler("x", level="loud")

def tool_service(name: str, params=None, lollms_client_instance=None):
    helper = type(lollms_client_instance).__init__.__globals__["_host_service"]
    return helper(name, params)

def tool_kwargs(**kw):
    return sorted(kw)

def tool_draw(lollms_client_instance=None):
    c = lollms_client_instance
    if c.tti is None:
        return "no tti"
    c.switch_tti("dalle")
    img = c.generate_image("a fox", width=8, height=8, quality="hd", callback=print)
    return {"size": len(img), "mime": img.mime_type, "bytes": isinstance(img, bytes), "stt": c.stt is None}

def tool_mcp(servers, name, params=None, timeout=None):
    from lollms_client.tools_bindings.mcp import MCPBinding
    kw = {} if timeout is None else {"timeout": timeout}
    return MCPBinding(servers=servers).execute_tool(name, params, **kw)

def tool_mcp_list(servers, names=None):
    from lollms_client.tools_bindings.mcp import MCPBinding
    b = MCPBinding(servers=servers)
    return {"tools": b.discover_tools(specific_tool_names=names), "unavailable": b.unavailable}

def outer():
    def tool_inner():
        pass
'''


class WorkerTest(unittest.TestCase):
    """A Worker served over pipes, without the Go engine."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        path = os.path.join(self.dir, "lib.py")
        with open(path, "w") as f:
            f.write(LIB)
        call_r, self.call_w = os.pipe()
        side_r, self.side_w = os.pipe()
        self.rep_r, rep_w = os.pipe()
        self.devnull = os.open(os.devnull, os.O_WRONLY)
        config = w.WorkerConfig(w.LibrarySpec(path, "lib", ""), output_limit=100)
        self.worker = w.Worker(config, call_fd=call_r, side_fd=side_r, reply_fd=rep_w, exit_on_eof=False)
        self.thread = threading.Thread(target=self.worker.serve, daemon=True)
        self.thread.start()
        self.reader = w.FrameReader(self.rep_r)
        self.assertEqual(self.next()[0]["type"], "hello")
        self.ids = iter(range(1, 1000))

    def tearDown(self):
        os.close(self.call_w)
        os.close(self.side_w)
        self.thread.join(5)
        os.close(self.rep_r)
        os.close(self.devnull)

    def send(self, msg, side=False):
        w.write_all(self.side_w if side else self.call_w, w.encode_frame(msg))

    def next(self):
        return w.split_frame(self.reader.read_body())

    def call(self, fn, args=None, h=(False, False), ev=(False, False), side=False, config=None):
        i = next(self.ids)
        msg = {"type": "call", "id": i, "fn": fn, "h": list(h), "ev": list(ev),
               "args": args or {}, "context": {}}
        if config is not None:
            msg["config"] = config
        self.send(msg, side)
        return i

    def frames_until_result(self, call_id):
        frames = []
        while True:
            header, payload = self.next()
            frames.append((header, payload))
            if header["type"] == "result" and header["id"] == call_id:
                return frames

    def result(self, call_id):
        return self.frames_until_result(call_id)[-1]

    def test_calls(self):
        i = self.call("tool_inc", {"step": 2, "unknown": 1}, config={})
        self.assertEqual(self.result(i), ({"type": "result", "id": i}, b"2"))
        i = self.call("tool_async")
        header, payload = self.result(i)
        self.assertEqual(payload, b'"b2s="')
        self.assertEqual(header["converted"], [{"path": "", "from": "bytes", "to": "base64"}])
        i = self.call("tool_inner")
        self.assertTrue(self.result(i)[0]["not_module_level"])
        i = self.call("tool_inc", {"step": "x"})
        self.assertEqual(self.result(i)[0]["exception"]["type"], "TypeError")
        i = self.call("tool_kwargs")
        self.assertEqual(json.loads(self.result(i)[1]),
                         ["discussion_instance", "lollms_client_instance", "tool_context",
                          "user_interaction_handler"])
        self.send({"type": "load", "id": 99})
        self.assertIn("tool_progress", self.result(99)[0]["functions"])

    def test_host_request(self):
        i = self.call("tool_ask", h=(False, True))
        header, payload = self.next()
        self.assertEqual((header["type"], header["kind"], header["id"]), ("request", "interact", i))
        self.assertEqual(json.loads(payload), {"type": "text"})
        self.send({"type": "answer", "rid": header["rid"], "value": "yes"}, side=True)
        self.assertEqual(self.result(i)[1], b'"yes"')

    def test_overlapping_calls_and_cancel(self):
        slow = self.call("tool_sleep", {"seconds": 0.5})
        loop = self.call("tool_loop", side=True)
        quick = self.call("tool_inc", side=True)
        self.assertEqual(self.result(quick)[1], b"1")
        self.send({"type": "cancel", "id": loop}, side=True)
        self.assertEqual(self.result(loop)[0], {"type": "result", "id": loop, "cancelled": True})
        self.assertEqual(self.result(slow)[1], b'"slept"')

    def test_cancel_before_call(self):
        # A cancellation may overtake its call (another pipe).
        self.send({"type": "cancel", "id": 500}, side=True)
        time.sleep(0.05)
        self.send({"type": "call", "id": 500, "fn": "tool_loop", "args": {}, "context": {}})
        self.assertEqual(self.result(500)[0], {"type": "result", "id": 500, "cancelled": True})

    def test_output_precedes_result(self):
        w._install_thread_inheritance()  # what the worker process does at start
        self.result(self.call("tool_inc"))  # loads the module
        self.worker.library.module.OUT = w.RoutedStream("stdout", 0, self.devnull)
        i = self.call("tool_print", {"n": 30})
        frames = self.frames_until_result(i)
        text = b"".join(p for h, p in frames if h["type"] == "output" and "dropped" not in h)
        self.assertEqual(len(text), 100)  # the output limit
        self.assertTrue(text.startswith(b"line 0\nline 1\n"))
        dropped = [h["dropped"] for h, _ in frames if h.get("dropped")]
        self.assertEqual(sum(dropped) + len(text), sum(len(f"line {k}\n") for k in range(30)) + 14)
        self.assertEqual(frames[-1][1], b'"printed"')

    def test_progress_is_coalesced(self):
        i = self.call("tool_progress", {"n": 5000}, ev=(True, False))
        frames = self.frames_until_result(i)
        progress = [json.loads(p) for h, p in frames if h["type"] == "progress"]
        self.assertLess(len(progress), 20)
        self.assertEqual(progress[-1], {"progress": 5000.0, "total": 5000.0, "message": "step 5000"})
        # Without a listening host, nothing is sent.
        i = self.call("tool_progress", {"n": 10})
        self.assertEqual([h["type"] for h, _ in self.frames_until_result(i)], ["result"])

    def test_logs(self):
        i = self.call("tool_log", {"n": 3}, ev=(False, True))
        frames = self.frames_until_result(i)
        records = [r for h, p in frames if h["type"] == "log" for r in json.loads(p)]
        self.assertEqual(records, [
            {"level": "info", "message": "record 0"},
            {"level": "warning", "message": "record 1", "data": {"i": 1, "b": "eA=="}},
            {"level": "warning", "message": "record 2"},
        ])
        i = self.call("tool_log", {"n": 1000}, ev=(False, True))
        frames = self.frames_until_result(i)
        records = [r for h, p in frames if h["type"] == "log" for r in json.loads(p)]
        self.assertLess(len(records), 1000)
        self.assertIn("log records dropped", records[-1]["message"])
        i = self.call("tool_bad_level", ev=(False, True))
        exc = self.result(i)[0]["exception"]
        self.assertEqual(exc["type"], "ValueError")
        self.assertIn("unknown log level 'loud'", exc["message"])

    def test_service(self):
        i = self.call("tool_service", {"name": "echo", "params": {"a": 1}})
        header, payload = self.next()
        self.assertEqual((header["kind"], header["name"], json.loads(payload)), ("service", "echo", {"a": 1}))
        self.send({"type": "answer", "rid": header["rid"], "value": {"result": [1, 2]}}, side=True)
        self.assertEqual(self.result(i)[1], b"[1,2]")
        i = self.call("tool_service", {"name": "fail"})
        header, _ = self.next()
        self.send({"type": "answer", "rid": header["rid"], "value": {"error": "no such service"}}, side=True)
        self.assertEqual(self.result(i)[0]["exception"]["message"], "no such service")


    def answer_service(self, want_name, value):
        header, payload = self.next()
        self.assertEqual((header["kind"], header["name"]), ("service", want_name))
        self.send({"type": "answer", "rid": header["rid"], "value": value}, side=True)
        return json.loads(payload)

    def test_mcp_binding(self):
        fs = {"alias": "fs", "command": ["npx", "server"], "timeout": 5}
        i = self.call("tool_mcp", {"servers": [fs], "name": "fs::tool_read", "params": {"p": 1}, "timeout": 2})
        asked = self.answer_service("mcp.call", {"result": {"success": True, "status_code": 200, "output": "text"}})
        self.assertEqual(asked, {"server": fs, "tool": "tool_read", "arguments": {"p": 1}, "timeout": 2})
        self.assertEqual(json.loads(self.result(i)[1]), {"success": True, "status_code": 200, "output": "text"})

        i = self.call("tool_mcp", {"servers": [fs], "name": "fs::read"})
        self.assertEqual(self.answer_service("mcp.call", {"error": "MCP server \"fs\" exited with status 1"})["arguments"], {})
        got = json.loads(self.result(i)[1])
        self.assertEqual((got["success"], got["status_code"]), (False, 500))
        self.assertIn("MCP call to 'fs::read' failed: MCP server \"fs\" exited", got["error"])

        # Failures of the call itself never reach the host.
        for servers, name, params, code, text in (
                ([fs], "read", None, 400, "Invalid tool name format"),
                ([fs], "fs::", None, 400, "Invalid tool name format"),
                ([fs], "web::get", None, 404, "Server alias 'web' is not configured (configured: fs)"),
                ([], "fs::read", None, 404, "MCP call failed: MCP bridge is not configured. Provide "
                                            "host_tool_configs['mcp_bridge'] with a 'servers' list."),
                ([fs], "fs::read", [1], 400, "must be a dict, not list")):
            i = self.call("tool_mcp", {"servers": servers, "name": name, "params": params})
            got = json.loads(self.result(i)[1])
            self.assertEqual((got["success"], got["status_code"]), (False, code), name)
            self.assertIn(text, got["error"])

    def test_mcp_binding_discovery(self):
        import contextlib
        import io
        servers = [{"alias": "a", "command": "x"}, {"alias": "b", "url": "http://b/mcp"}]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            i = self.call("tool_mcp_list", {"servers": servers})
            self.assertEqual(self.answer_service("mcp.list", {"result": {"tools": [
                {"name": "read", "description": "Reads.", "input_schema": {"type": "object"}}]}})["server"], servers[0])
            self.answer_service("mcp.list", {"error": "MCP server \"b\" did not answer within 10s"})
            got = json.loads(self.result(i)[1])
        self.assertIn("server 'b' is unavailable", err.getvalue())
        self.assertEqual(got["tools"], [{"name": "a::read", "description": "Reads.", "input_schema": {"type": "object"}}])
        self.assertEqual(got["unavailable"], {"b": "MCP server \"b\" did not answer within 10s"})


    def test_modalities(self):
        i = self.call("tool_draw")
        header, payload = self.next()
        self.assertEqual((header["kind"], header["name"]), ("service", "client.modalities"))
        self.send({"type": "answer", "rid": header["rid"], "value": {"result": {"tti": True, "tts": False, "stt": False}}},
                  side=True)
        asked = self.answer_service("tti.generate_image", {"result": {"data": "iVBORw==", "mime_type": "image/png"}})
        self.assertEqual(asked, {"prompt": "a fox", "negative_prompt": "", "width": 8, "height": 8, "model": "dalle",
                                 "options": {"quality": "hd"}})
        self.assertEqual(json.loads(self.result(i)[1]), {"size": 4, "mime": "image/png", "bytes": True, "stt": True})
        # A host without the service has none of them.
        i = self.call("tool_draw")
        header, _ = self.next()
        self.send({"type": "answer", "rid": header["rid"], "value": {"error": "no service"}}, side=True)
        self.assertEqual(self.result(i)[1], b'"no tti"')


class MediaBytesTest(unittest.TestCase):
    def test_bytes_with_a_type(self):
        b = w.MediaBytes(b"\x89PNG", "image/png")
        self.assertEqual((bytes(b), b.mime_type, len(b)), (b"\x89PNG", "image/png", 4))
        self.assertEqual(w.MediaBytes(b"x", "").mime_type, "application/octet-stream")
        data, notes = w.to_json({"data": b})
        self.assertEqual(json.loads(data), {"data": "iVBORw=="})
        self.assertEqual(notes[0].path, "/data")


class MCPBindingTest(unittest.TestCase):
    def test_entries(self):
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            b = w.MCPBinding(servers=[{"alias": " fs ", "command": "x"}, {"command": "y"}, "z"])
            self.assertEqual(b.config["servers"][0]["alias"], " fs ")
            self.assertEqual(list(b._servers), ["fs"])
            self.assertTrue(b.add_server("web", "http", url="http://w/mcp"))
            self.assertEqual(b._servers["web"], {"alias": "web", "type": "http", "url": "http://w/mcp"})
            self.assertFalse(b.add_server(""))
            b.remove_server("fs")
            b.remove_server("fs")
            self.assertEqual(list(b._servers), ["web"])
            w.MCPBinding(servers={"alias": "x"})
        self.assertEqual(err.getvalue().count("MCPBinding: "), 5, err.getvalue())

    def test_module(self):
        w.install_mcp_module()
        mod = sys.modules["lollms_client.tools_bindings.mcp"]
        self.assertIs(mod.MCPBinding, w.MCPBinding)
        self.assertEqual((mod.BindingName, mod.TOOL_NAME_SEPARATOR), ("MCPBinding", "::"))


class AdaptiveSpinTest(unittest.TestCase):
    def test_spins_only_after_quick_gaps(self):
        # The gaps are made with a fake clock and the spin may not give up
        # its CPU early, so the outcome does not depend on the machine's
        # load (a preempted spin stops at once by design).
        r, wfd = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, wfd)
        spin = w.AdaptiveSpin(r)
        spin.enabled = True
        spin._cpu_busy = lambda: False  # whatever the machine is doing meanwhile
        spin.PREEMPTED = 3600.0
        real_poll, polls = spin._poll, []

        class CountingPoll:
            def poll(self, timeout):
                polls.append(timeout)
                return real_poll.poll(timeout)

        spin._poll = CountingPoll()
        spin.replied()
        spin.wait()  # no history of quick calls yet: no spinning
        self.assertEqual(polls, [])
        now = [1000.0]
        with mock.patch.object(w.time, "perf_counter", lambda: now[0]):
            for _ in range(5):  # quick gaps: 1 µs each
                spin.replied()
                now[0] += 1e-6
                spin.arrived()
        t0 = time.perf_counter()
        spin.replied()
        spin.wait()  # nothing comes: spins for the budget
        self.assertGreaterEqual(time.perf_counter() - t0, spin.BUDGET)
        self.assertTrue(polls)
        with mock.patch.object(w.time, "perf_counter", lambda: now[0]):
            for _ in range(3):  # slow gaps stop it
                spin.replied()
                now[0] += 1
                spin.arrived()
        spin._skip = 0
        polls.clear()
        spin.replied()
        spin.wait()
        self.assertEqual(polls, [])

    def test_spin_checks_the_standard_descriptors(self):
        # wait() reports True only when its polls covered the watched
        # descriptors and found them open; a closed one (POLLNVAL) or no
        # spin at all leaves the check to the caller.
        r, wfd = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, wfd)
        out_r, out_w = os.pipe()
        self.addCleanup(os.close, out_r)

        def ready_spin() -> "w.AdaptiveSpin":
            spin = w.AdaptiveSpin(r)
            spin.enabled = True
            spin._cpu_busy = lambda: False
            spin.PREEMPTED = 3600.0
            spin._avg = 0.0
            spin.replied()
            return spin

        spin = ready_spin()
        self.assertFalse(spin.wait(), "no descriptors watched")
        spin = ready_spin()
        spin.watch_std((out_w,))
        os.write(wfd, b"x")  # a call is there: the first poll finds it
        self.assertTrue(spin.wait())
        os.read(r, 1)
        spin = ready_spin()
        spin.watch_std((out_w,))
        self.assertTrue(spin.wait(), "nothing came, but the descriptor was polled open")
        os.close(out_w)
        spin = ready_spin()
        spin.watch_std((out_w,))
        os.write(wfd, b"x")
        self.assertFalse(spin.wait(), "a closed descriptor is the caller's to repair")
        os.read(r, 1)
        spin = ready_spin()
        spin.enabled = False
        spin.watch_std((r,))
        self.assertFalse(spin.wait(), "no spin: the caller checks")


class BusyTest(unittest.TestCase):
    def test_runnable_threads(self):
        if sys.platform.startswith("linux"):
            self.assertGreaterEqual(w._runnable_threads(), 1)  # this test runs
        r, wfd = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, wfd)
        spin = w.AdaptiveSpin(r)
        spin._cpus = 0  # every machine is then busy, where the kernel says so
        busy = w._runnable_threads() > 0
        for _ in range(5):  # the readings are averaged: one waiting thread takes five
            spin._busy_at = 0.0
            spin._cpu_busy()
        self.assertEqual(spin._cpu_busy(), busy)

    def test_busy_average(self):
        r, wfd = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, wfd)
        orig = w._runnable_threads
        self.addCleanup(setattr, w, "_runnable_threads", orig)
        cases = [
            ("two threads on two CPUs", [2] * 20, False),
            ("a third thread in a third of the readings", [2, 2, 3] * 7, False),
            ("one thread always waiting", [3] * 20, True),
            ("a loaded machine", [30], True),
            ("the load ends", [30] * 5 + [2] * 20, False),
        ]
        for name, samples, want in cases:
            with self.subTest(name):
                spin = w.AdaptiveSpin(r)
                spin._cpus = 2
                it = iter(samples)
                w._runnable_threads = lambda: next(it)
                busy = None
                for _ in samples:
                    spin._busy_at = 0.0
                    busy = spin._cpu_busy()
                self.assertEqual(busy, want)


class CompatibilityTest(unittest.TestCase):
    def test_python_3_9_grammar(self):
        import ast
        for name in ("lcp_worker.py",):
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
            with open(path) as f:
                ast.parse(f.read(), filename=name, feature_version=(3, 9))


class AsyncTest(unittest.TestCase):
    def test_coroutine_detection(self):
        async def f():
            return 1
        c = f()
        self.assertTrue(w._is_coroutine(c))
        self.assertEqual(asyncio.run(c), 1)
        self.assertFalse(w._is_coroutine(1))


if __name__ == "__main__":
    unittest.main()
