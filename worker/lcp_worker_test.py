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
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lcp_worker as w  # noqa: E402


class Thing(object):
    def __repr__(self):
        return "<Thing>"


class ToJSONTest(unittest.TestCase):
    def check(self, value, want, notes=None):
        data, got_notes = w.to_json(value)
        self.assertEqual(json.loads(data), want)
        self.assertEqual(got_notes, notes)

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
        return w.CallPlan(fn).bind(args, lambda name: "<%s>" % name)

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
        self.assertEqual(sorted(kw), ["a", "discussion_instance", "lollms_client_instance",
                                      "tool_context", "user_interaction_handler", "zz"])

    def test_injection_only_declared(self):
        def f(x, tool_context=None):
            pass
        self.assertEqual(self.bind(f, {"x": 1}), ([], {"x": 1, "tool_context": "<tool_context>"}))

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
        self.assertEqual(d["type"], "KeyError")
        self.assertEqual(d["message"], "'k'")
        self.assertTrue(d["traceback"].startswith("Traceback (most recent call last):\n"))
        self.assertTrue(d["traceback"].endswith("KeyError: 'k'\n"))

    def test_empty_message(self):
        d = w.describe_exception(SystemExit())
        self.assertEqual((d["type"], d["message"]), ("SystemExit", ""))


class FrameTest(unittest.TestCase):
    def test_round_trip(self):
        data = w.encode_frame({"type": "x", "n": 1}, b'{"raw":\n1}')
        (n,) = struct.unpack(">I", data[:4])
        self.assertEqual(n, len(data) - 4)
        header, payload = w.split_frame(data[4:])
        self.assertEqual(header, {"type": "x", "n": 1})
        self.assertEqual(payload, b'{"raw":\n1}')


class WorkerTest(unittest.TestCase):
    """A Worker served over pipes, without the Go engine."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        path = os.path.join(self.dir, "lib.py")
        with open(path, "w") as f:
            f.write(
                "import asyncio\n"
                "N = 0\n"
                "def tool_inc(step: int = 1):\n"
                "    global N\n"
                "    N += step\n"
                "    return N\n"
                "def tool_ask(user_interaction_handler=None):\n"
                "    return user_interaction_handler({'type': 'text'})\n"
                "async def tool_async():\n"
                "    await asyncio.sleep(0)\n"
                "    return b'ok'\n"
                "def outer():\n"
                "    def tool_inner():\n"
                "        pass\n"
            )
        r1, self.req_w = os.pipe()
        self.rep_r, w1 = os.pipe()
        self.worker = w.Worker(r1, w1, {"library": {"path": path, "stem": "lib"}}, exit_on_eof=False)
        self.thread = threading.Thread(target=self.worker.serve, daemon=True)
        self.thread.start()
        self.reader = os.fdopen(self.rep_r, "rb")
        self.assertEqual(self.next()[0]["type"], "hello")

    def tearDown(self):
        os.close(self.req_w)
        self.thread.join(5)
        self.reader.close()

    def send(self, header, payload=None):
        w.write_all(self.req_w, w.encode_frame(header, payload))

    def next(self):
        return w.split_frame(w.read_frame(self.reader))

    def call(self, i, fn, args="{}", h=(False, False)):
        self.send({"type": "call", "id": i, "fn": fn, "h": list(h)},
                  ('{"args":%s,"context":{},"config":{}}' % args).encode())

    def result(self):
        while True:
            header, payload = self.next()
            if header["type"] == "result":
                return header, payload

    def test_calls(self):
        self.call(1, "tool_inc", '{"step": 2, "unknown": 1}')
        self.assertEqual(self.result(), ({"type": "result", "id": 1}, b"2"))
        self.call(2, "tool_async")
        header, payload = self.result()
        self.assertEqual(payload, b'"b2s="')
        self.assertEqual(header["converted"], [{"path": "", "from": "bytes", "to": "base64"}])
        self.call(3, "tool_inner")
        self.assertTrue(self.result()[0]["not_module_level"])
        self.call(4, "tool_inc", '{"step": "x"}')
        self.assertEqual(self.result()[0]["exception"]["type"], "TypeError")

    def test_host_request(self):
        self.call(1, "tool_ask", h=(False, True))
        header, payload = self.next()
        self.assertEqual((header["type"], header["kind"]), ("request", "interact"))
        self.assertEqual(json.loads(payload), {"type": "text"})
        self.send({"type": "answer", "rid": header["rid"]}, b'"yes"')
        self.assertEqual(self.result()[1], b'"yes"')


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
