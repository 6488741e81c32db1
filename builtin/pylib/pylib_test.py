"""Tests of the embedded example libraries, driven with fake handlers.

Run with: python3 -m unittest builtin/pylib/pylib_test.py (the Go tests of
package pylib run it too).
"""
import http.server
import importlib.util
import json
import os
import stat
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, folder="lib"):
    path = os.path.join(HERE, folder, name, name + ".py")
    spec = importlib.util.spec_from_file_location("pylib_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Answers:
    """A user interaction handler that answers from a list and records requests."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        return self.answers.pop(0)


class Confirm:
    def __init__(self, decision="allow", reason=""):
        self.decision, self.reason, self.calls = decision, reason, []

    def __call__(self, source, label, argv=None):
        self.calls.append((source, label))
        return self.decision, self.reason


class InWorkspace(unittest.TestCase):
    def setUp(self):
        self.old = os.getcwd()
        self.tmp = tempfile.TemporaryDirectory()
        os.chdir(self.tmp.name)

    def tearDown(self):
        os.chdir(self.old)
        self.tmp.cleanup()


KEY = "sk-live-abcdef0123456789"


class ConfigureTests(InWorkspace):
    def setUp(self):
        super().setUp()
        self.m = load("user_interactive_tools")

    def test_configure_saves_the_key_and_shows_it_masked(self):
        ask = Answers(KEY, "us-east", "weather for the dashboard")
        self.m.set_user_interaction_handler(ask)
        res = self.m.tool_configure_service_connection("weather_api")
        self.assertTrue(res["success"], res)
        self.assertNotIn(KEY, json.dumps(res))
        self.assertEqual(res["masked_key"], "sk-l...6789")
        self.assertIn("us-east", res["output"])
        self.assertEqual([r["type"] for r in ask.requests], ["secret", "select", "text"])
        self.assertEqual(ask.requests[1]["options"], ["eu-west", "us-east", "us-west", "ap-south"])
        with open("service_connections.json") as f:
            saved = json.load(f)
        self.assertEqual(saved["weather_api"]["api_key"], KEY)
        self.assertEqual(saved["weather_api"]["region"], "us-east")
        self.assertEqual(saved["weather_api"]["description"], "weather for the dashboard")
        self.assertEqual(stat.S_IMODE(os.stat("service_connections.json").st_mode), 0o600)

    def test_configure_keeps_other_services(self):
        self.m.set_user_interaction_handler(Answers(KEY, "eu-west", ""))
        self.m.tool_configure_service_connection("a")
        self.m.set_user_interaction_handler(Answers("other-key-000000", "ap-south", ""))
        self.m.tool_configure_service_connection("b")
        with open("service_connections.json") as f:
            self.assertEqual(sorted(json.load(f)), ["a", "b"])

    def test_cancel_and_bad_answers(self):
        for answers, message in [
            ((None,), "API key is required"),
            (("",), "API key is required"),
            ((KEY, None), "region"),
            ((KEY, "mars-1"), "Unknown region"),
            ((KEY, "eu-west", None), "description"),
        ]:
            self.m.set_user_interaction_handler(Answers(*answers))
            res = self.m.tool_configure_service_connection("svc")
            self.assertFalse(res["success"])
            self.assertIn(message, res["error"])
            self.assertFalse(os.path.exists("service_connections.json"))

    def test_no_handler_and_bad_name(self):
        self.m.set_user_interaction_handler(None)
        self.assertIn("cannot ask", self.m.tool_configure_service_connection("svc")["error"])
        self.m.set_user_interaction_handler(Answers(KEY))
        self.assertIn("service_name", self.m.tool_configure_service_connection("../etc")["error"])

    def test_init_tools_library_takes_handlers(self):
        ask = Answers(KEY, "eu-west", "")
        self.m.init_tools_library({"user_interaction_handler": ask, "autonomy_level": "strict"})
        self.assertTrue(self.m.tool_configure_service_connection("svc")["success"])
        self.assertEqual(self.m.AUTONOMY_LEVEL, "strict")


class Recorder(http.server.BaseHTTPRequestHandler):
    seen = []
    status = 200

    def do_GET(self):
        Recorder.seen.append(self.headers.get("Authorization"))
        self.send_response(Recorder.status)
        self.end_headers()

    def log_message(self, *args):
        pass


class TestConnectionTests(InWorkspace):
    def setUp(self):
        super().setUp()
        self.m = load("user_interactive_tools")
        self.m.set_user_interaction_handler(Answers(KEY, "eu-west", ""))
        self.assertTrue(self.m.tool_configure_service_connection("svc")["success"])
        self.server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = "http://127.0.0.1:%d/ping" % self.server.server_port
        Recorder.seen, Recorder.status = [], 200

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        super().tearDown()

    def test_approved_test_reports_the_status_and_sends_the_key(self):
        confirm = Confirm("allow")
        self.m.init_tools_library({"confirm_handler": confirm, "test_urls": {"svc": self.url}})
        res = self.m.tool_test_service_connection("svc")
        self.assertTrue(res["success"], res)
        self.assertEqual(res["http_status"], 200)
        self.assertIn("HTTP 200", res["output"])
        self.assertNotIn(KEY, json.dumps(res))
        self.assertEqual(Recorder.seen, ["Bearer " + KEY])
        self.assertEqual(len(confirm.calls), 1)
        self.assertIn(self.url, confirm.calls[0][0])
        self.assertNotIn(KEY, confirm.calls[0][0])

    def test_http_error_status_is_a_failure_with_the_status(self):
        Recorder.status = 401
        self.m.init_tools_library({"confirm_handler": Confirm("always"), "test_url": self.url + "?s={service}&r={region}"})
        res = self.m.tool_test_service_connection("svc")
        self.assertFalse(res["success"])
        self.assertEqual(res["http_status"], 401)
        self.assertIn("HTTP 401", res["error"])

    def test_rejected_test_makes_no_request(self):
        self.m.init_tools_library({"confirm_handler": Confirm("reject", "no network today"), "test_urls": {"svc": self.url}})
        res = self.m.tool_test_service_connection("svc")
        self.assertFalse(res["success"])
        self.assertIn("no network today", res["error"])
        self.assertEqual(Recorder.seen, [])

    def test_default_url_never_gets_the_key(self):
        self.m.init_tools_library({"confirm_handler": Confirm("allow")})
        self.m.DEFAULT_TEST_URL = self.url
        res = self.m.tool_test_service_connection("svc")
        self.assertTrue(res["success"], res)
        self.assertEqual(Recorder.seen, [None])

    def test_full_access_does_not_ask_and_no_handler_refuses(self):
        confirm = Confirm("reject")
        self.m.init_tools_library({"confirm_handler": confirm, "autonomy_level": "full_access", "test_urls": {"svc": self.url}})
        self.assertTrue(self.m.tool_test_service_connection("svc")["success"])
        self.assertEqual(confirm.calls, [])
        self.m.init_tools_library({"autonomy_level": "safe"})
        self.m.set_confirm_handler(None)
        self.assertIn("no confirmation handler", self.m.tool_test_service_connection("svc")["error"])

    def test_unconfigured_service(self):
        res = self.m.tool_test_service_connection("other")
        self.assertFalse(res["success"])
        self.assertIn("tool_configure_service_connection", res["error"])


class DeploymentTests(unittest.TestCase):
    def setUp(self):
        self.m = load("user_interaction_demo")

    def test_production_asks_then_collects(self):
        confirm = Confirm("allow")
        self.m.set_confirm_handler(confirm)
        ask = Answers("rolling", "registry-key-9876", "v1.2.3")
        res = self.m.tool_prepare_deployment(user_interaction_handler=ask)
        self.assertTrue(res["success"], res)
        self.assertEqual((res["strategy"], res["image_tag"], res["target"]), ("rolling", "v1.2.3", "production"))
        self.assertIn("***9876", res["output"])
        self.assertNotIn("registry-key-9876", json.dumps(res))
        self.assertEqual(confirm.calls[0][1], "deploy:production")
        self.assertEqual([r["type"] for r in ask.requests], ["select", "secret", "text"])
        self.assertEqual(ask.requests[0]["default"], "canary")
        self.assertEqual(ask.requests[2]["default"], "latest")

    def test_staging_does_not_ask_for_approval(self):
        confirm = Confirm("reject")
        self.m.set_confirm_handler(confirm)
        res = self.m.tool_prepare_deployment("rollback", "staging", Answers("canary", "k" * 10, ""))
        self.assertTrue(res["success"], res)
        self.assertEqual(res["image_tag"], "latest")
        self.assertEqual(confirm.calls, [])

    def test_refusals_and_cancellations(self):
        self.m.set_confirm_handler(Confirm("reject", "freeze week"))
        res = self.m.tool_prepare_deployment(user_interaction_handler=Answers())
        self.assertIn("freeze week", res["error"])
        self.m.set_confirm_handler(Confirm("allow"))
        for answers, message in [((None,), "strategy"), (("canary", None), "API key"), (("canary", ""), "API key"),
                                 (("canary", "key-12345678", None), "image tag"), (("yolo",), "Unknown strategy")]:
            res = self.m.tool_prepare_deployment(user_interaction_handler=Answers(*answers))
            self.assertFalse(res["success"])
            self.assertIn(message, res["error"])

    def test_handlers_from_the_module_hooks(self):
        self.m.set_confirm_handler(None)
        self.m.set_user_interaction_handler(None)
        self.assertIn("no user interaction handler", self.m.tool_prepare_deployment()["error"])
        self.m.init_tools_library({"user_interaction_handler": Answers("canary", "key-12345678", "x")})
        self.assertIn("no confirmation handler", self.m.tool_prepare_deployment()["error"])
        self.assertTrue(self.m.tool_prepare_deployment(target="dev")["success"])


if __name__ == "__main__":
    unittest.main()


class FakeMCPBinding:
    """Stands in for lollms_client.tools_bindings.mcp.MCPBinding."""

    def __init__(self, servers):
        self.servers = servers
        self.calls = []
        self.unavailable = {}

    def execute_tool(self, name, params):
        self.calls.append((name, params))
        if name.startswith("down::"):
            return {"success": False, "status_code": 500, "error": 'MCP server "down" exited with status 1',
                    "output": 'MCP server "down" exited with status 1'}
        return {"success": True, "status_code": 200, "output": "ok",
                "_lcp_content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}

    def discover_tools(self):
        self.unavailable = {"down": 'MCP server "down" exited with status 1'}
        return [{"name": "fs::read_file", "description": "Reads a file.", "input_schema": {}},
                {"name": "web::fetch", "description": "Fetches a page.", "input_schema": {}}]


class BridgeTests(unittest.TestCase):
    def setUp(self):
        import sys
        import types
        fake = types.ModuleType("lollms_client.tools_bindings.mcp")
        fake.MCPBinding = FakeMCPBinding
        self.saved = {k: sys.modules.get(k) for k in ("lollms_client", "lollms_client.tools_bindings",
                                                       "lollms_client.tools_bindings.mcp")}
        for k in self.saved:
            sys.modules[k] = fake if k.endswith(".mcp") else types.ModuleType(k)
        self.m = load("mcp_bridge", "optional")

    def tearDown(self):
        import sys
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def test_not_configured(self):
        for config in (None, {}, {"confirm_handler": Confirm()}, {"servers": []}):
            self.m.init_tools_library(config)
            res = self.m.tool_call_mcp_tool("fs", "read_file")
            self.assertEqual(res["error"], "MCP call failed: MCP bridge is not configured. Provide "
                             "host_tool_configs['mcp_bridge'] with a 'servers' list.")
            self.assertFalse(self.m.tool_list_mcp_tools()["success"])

    def test_calls(self):
        self.m.init_tools_library({"servers": [{"alias": "fs", "command": "x"}]})
        b = self.m._mcp_binding
        res = self.m.tool_call_mcp_tool("fs", "read_file", '{"path": "a.txt"}')
        self.assertEqual(res["output"], "ok")
        self.assertTrue(res["success"])
        self.assertEqual(res["_lcp_content"][0]["type"], "image")
        self.m.tool_call_mcp_tool("fs", "tool_read_file", {"path": "b.txt"})
        self.m.tool_call_mcp_tool("fs", "list", "  ")
        self.assertEqual(b.calls, [("fs::read_file", {"path": "a.txt"}), ("fs::tool_read_file", {"path": "b.txt"}),
                                   ("fs::list", {})])
        res = self.m.tool_call_mcp_tool("down", "x")
        self.assertFalse(res["success"])
        self.assertIn('"down" exited', res["error"])
        for bad, text in (("{", "Invalid JSON"), ("[1]", "must decode to a JSON object"), (3, "not int")):
            res = self.m.tool_call_mcp_tool("fs", "read_file", bad)
            self.assertFalse(res["success"])
            self.assertIn(text, res["error"])
        self.assertEqual(len(b.calls), 4)

    def test_list(self):
        self.m.init_tools_library({"servers": [{"alias": "fs", "command": "x"}]})
        res = self.m.tool_list_mcp_tools()
        self.assertTrue(res["success"])
        self.assertEqual(res["output"].splitlines(), [
            "- fs::read_file: Reads a file.", "- web::fetch: Fetches a page.",
            'Unavailable: down: MCP server "down" exited with status 1'])
        res = self.m.tool_list_mcp_tools("web")
        self.assertEqual(res["output"], "- web::fetch: Fetches a page.")
        res = self.m.tool_list_mcp_tools("down")
        self.assertFalse(res["success"])
        self.assertIn("Unavailable: down: ", res["error"])

