"""A small MCP server over stdio, for the tests of the MCP bridge.

It speaks just enough of MCP (initialize, tools/list, tools/call, ping) to
be driven by lcp's client. Each start appends its pid to the file named by
FAKE_MCP_PIDS, so that a test can count how many processes served it.

Tools: add (a + b), pid (its process id), hang (never answers), boom (a
tool error), tool_prefixed (a name that starts with tool_).
"""
import json
import os
import sys

PIDS = os.environ.get("FAKE_MCP_PIDS")
if PIDS:
    with open(PIDS, "a") as f:
        f.write(f"{os.getpid()}\n")

OBJ = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "add", "description": "Adds two numbers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "pid", "description": "Its process id.", "inputSchema": OBJ},
    {"name": "hang", "description": "Never answers.", "inputSchema": OBJ},
    {"name": "boom", "description": "Always fails.", "inputSchema": OBJ},
    {"name": "tool_prefixed", "description": "A name with the LCP prefix.", "inputSchema": OBJ},
]


def text(s, error=False):
    return {"content": [{"type": "text", "text": s}], "isError": error}


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1.0.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "add":
            return text(str(args["a"] + args["b"]))
        if name == "pid":
            return text(str(os.getpid()))
        if name == "hang":
            return None
        if name == "boom":
            return text("boom: it failed", error=True)
        if name == "tool_prefixed":
            return text("prefixed")
        raise KeyError(name)
    raise NotImplementedError(method)


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue  # notifications and answers
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    try:
        result = answer(msg)
        if result is None:
            continue
        reply["result"] = result
    except KeyError as e:
        reply["error"] = {"code": -32602, "message": f"Unknown tool: {e}"}
    except NotImplementedError as e:
        reply["error"] = {"code": -32601, "message": f"Method not found: {e}"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
