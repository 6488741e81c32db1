"""
mcp_bridge.py — LCP library that proxies calls to configured MCP servers.
"""
import json
from typing import Any, Dict, Optional

TOOL_LIBRARY_NAME = "MCP Bridge"
TOOL_LIBRARY_DESC = "Calls tools hosted on configured MCP servers (stdio or HTTP)."
TOOL_LIBRARY_ICON = "🔗"

_mcp_binding = None

def init_tools_library(config: Optional[dict] = None) -> None:
    """Lazily builds the embedded MCPBinding from host-provided server configs."""
    global _mcp_binding
    if _mcp_binding is None and config and isinstance(config, dict):
        from lollms_client.tools_bindings.mcp import MCPBinding
        _mcp_binding = MCPBinding(servers=config.get("servers", []))

def _require_mcp():
    if _mcp_binding is None:
        raise RuntimeError(
            "MCP bridge is not configured. Provide host_tool_configs['mcp_bridge'] "
            "with a 'servers' list."
        )
    return _mcp_binding

def tool_call_mcp_tool(server_alias: str, mcp_tool_name: str, arguments: str = "{}") -> Dict[str, Any]:
    """
    Calls a tool hosted on a configured MCP server and returns its result.

    Args:
        server_alias (str): The alias of the configured MCP server (e.g. 'filesystem').
        mcp_tool_name (str): The name of the tool on that server (e.g. 'read_file').
        arguments (str): A JSON object string with the tool's arguments.
    """
    try:
        payload = json.loads(arguments) if arguments and arguments.strip() else {}
        if not isinstance(payload, dict):
            return {"success": False, "error": "'arguments' must decode to a JSON object."}
    except json.JSONDecodeError as ex:
        return {"success": False, "error": f"Invalid JSON in 'arguments': {ex}"}

    try:
        binding = _require_mcp()
        result = binding.execute_tool(
            f"{server_alias}::{'tool_'}{mcp_tool_name}".replace("tool_tool_", "tool_"),
            payload,
        )
        return {
            "success": bool(result.get("success", not result.get("error"))),
            "output": result.get("output", result),
            "error": result.get("error"),
        }
    except Exception as ex:
        return {"success": False, "error": f"MCP call failed: {ex}"}
