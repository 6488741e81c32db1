"""
mcp_bridge.py — calls the tools of MCP servers from an LCP library.

The servers are host configuration, invisible to the LLM:
host_tool_configs["mcp_bridge"] = {"servers": [...]}, each entry as the LCP
host configuration writes it, for example

    {"alias": "fs", "type": "stdio", "command": "npx",
     "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]}
    {"alias": "search", "type": "http", "url": "http://localhost:8000/mcp",
     "headers": {"Authorization": "Bearer ..."}}

The bridge is lollms_client's MCPBinding, which lcp runs on its own MCP
client: the sessions belong to the engine (shared by every call, closed with
it), and a server's questions reach the person the calling tool asks.
"""
import json
from typing import Any, Dict, Optional

TOOL_LIBRARY_NAME = "MCP Bridge"
TOOL_LIBRARY_DESC = "Calls tools hosted on configured MCP servers (stdio or HTTP)."
TOOL_LIBRARY_ICON = "🔗"

_mcp_binding = None


def init_tools_library(config: Optional[dict] = None) -> None:
    """Builds the embedded MCPBinding from the servers of the host configuration."""
    global _mcp_binding
    servers = config.get("servers") if isinstance(config, dict) else None
    if _mcp_binding is None and servers:
        from lollms_client.tools_bindings.mcp import MCPBinding
        _mcp_binding = MCPBinding(servers=servers)


def _require_mcp():
    if _mcp_binding is None:
        raise RuntimeError(
            "MCP bridge is not configured. Provide host_tool_configs['mcp_bridge'] "
            "with a 'servers' list."
        )
    return _mcp_binding


def _arguments(arguments: Any) -> Dict[str, Any]:
    """The call's arguments: a JSON object, given as text or as an object."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    if not isinstance(arguments, str):
        raise ValueError(f"'arguments' must be a JSON object, not {type(arguments).__name__}.")
    try:
        payload = json.loads(arguments)
    except json.JSONDecodeError as ex:
        raise ValueError(f"Invalid JSON in 'arguments': {ex}") from None
    if not isinstance(payload, dict):
        raise ValueError("'arguments' must decode to a JSON object.")
    return payload


def tool_call_mcp_tool(server_alias: str, mcp_tool_name: str, arguments: str = "{}") -> Dict[str, Any]:
    """
    Calls a tool hosted on a configured MCP server and returns its result.

    Args:
        server_alias (str): The alias of the configured MCP server (e.g. 'filesystem').
        mcp_tool_name (str): The name of the tool on that server (e.g. 'read_file').
        arguments (str): A JSON object string with the tool's arguments.
    """
    try:
        payload = _arguments(arguments)
    except ValueError as ex:
        return {"success": False, "error": str(ex)}
    try:
        binding = _require_mcp()
    except RuntimeError as ex:
        return {"success": False, "error": f"MCP call failed: {ex}"}
    # The server's own name; a "tool_" prefix the model adds is tolerated
    # (the bridge falls back to the name without it).
    result = binding.execute_tool(f"{server_alias}::{mcp_tool_name}", payload)
    out = {
        "success": bool(result.get("success", not result.get("error"))),
        "output": result.get("output", result),
        "error": result.get("error"),
    }
    # Images, sounds and resources of the server's result travel on as
    # content blocks (what MCP clients of lcp receive).
    if result.get("_lcp_content"):
        out["_lcp_content"] = result["_lcp_content"]
    return out


def tool_list_mcp_tools(server_alias: str = "") -> Dict[str, Any]:
    """
    Lists the tools of the configured MCP servers: their names, descriptions and argument schemas.

    Args:
        server_alias (str): Only the tools of this server; empty lists every server's.
    """
    try:
        binding = _require_mcp()
    except RuntimeError as ex:
        return {"success": False, "error": str(ex)}
    tools = binding.discover_tools()
    if server_alias:
        tools = [t for t in tools if t["name"].split("::", 1)[0] == server_alias]
    down = {a: e for a, e in getattr(binding, "unavailable", {}).items() if not server_alias or a == server_alias}
    problems = "; ".join(f"{a}: {e}" for a, e in sorted(down.items()))
    if not tools:
        where = f"MCP server '{server_alias}'" if server_alias else "the configured MCP servers"
        return {"success": False, "error": f"No tools found on {where}." + (f" Unavailable: {problems}" if problems else "")}
    lines = [f"- {t['name']}: {t['description']}" for t in tools]
    if problems:
        lines.append(f"Unavailable: {problems}")
    return {"success": True, "output": "\n".join(lines), "tools": tools}
