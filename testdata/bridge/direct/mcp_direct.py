"""Drives lollms_client.tools_bindings.mcp.MCPBinding directly, for the
tests of the MCP bridge: the servers come from the host configuration."""
import json

from lollms_client.tools_bindings.mcp import MCPBinding, TOOL_NAME_SEPARATOR, BindingName

_binding = None


def init_tools_library(config=None):
    global _binding
    _binding = MCPBinding(servers=(config or {}).get("servers"))


def tool_discover(names: str = ""):
    """Lists the tools of every server."""
    wanted = [n for n in names.split(",") if n] or None
    return {"tools": [t["name"] for t in _binding.discover_tools(specific_tool_names=wanted)],
            "unavailable": _binding.unavailable, "module": [BindingName, TOOL_NAME_SEPARATOR]}


def tool_exec(name: str, params: str = "{}", timeout: float = 0):
    """Calls a server's tool; returns MCPBinding's result as it is."""
    kwargs = {"timeout": timeout} if timeout else {}
    return {"result": _binding.execute_tool(name, json.loads(params), **kwargs)}


def tool_add_server(alias: str, entry: str):
    """Adds a server at run time."""
    return _binding.add_server(alias, **json.loads(entry))


def tool_via_host(name: str, params: str = "{}", lollms_client_instance=None):
    """Calls an MCP tool of the host's inventory (the seed's second pattern)."""
    return {"result": lollms_client_instance.tools.execute_tool(name, json.loads(params))}
