"""An omni-tool: it uses the host through lollms_client_instance."""

TOOL_LIBRARY_NAME = "Omni"
TOOL_LIBRARY_DESC = "Calls other tools and the host's LLM."


def tool_sum_via_host(a: int, b: int, lollms_client_instance=None):
    """Adds two numbers by asking the host's native add tool, then doubles
    the sum with the Python tool tool_double.

    Args:
        a: the first number
        b: the second number
    """
    client = lollms_client_instance
    if client is None:
        return {"success": False, "error": "This tool needs the host's client."}
    added = client.tools.execute_tool("add", {"a": a, "b": b})
    if not added.get("success"):
        return {"success": False, "error": "add failed: %s" % added.get("error")}
    total = added["output"]["sum"]
    doubled = client.tools.execute_tool("tool_double", {"x": total})
    return {"success": True, "output": doubled["output"], "sum": total}


def tool_double(x: int):
    """Doubles x."""
    return x * 2


def tool_caption(subject: str, lollms_client_instance=None):
    """Writes a caption with the host's LLM, guarded as the seed says."""
    client = lollms_client_instance
    if client is None or client.llm is None:
        return {"success": False, "error": "Missing required modality binding: text (LLM) must be configured."}
    text = client.generate_text(prompt="Caption for " + subject, n_predict=32)
    return {"success": True, "output": str(text).strip()}


def tool_ask_nested(lollms_client_instance=None):
    """Calls a tool that asks for approval, through the host."""
    return lollms_client_instance.tools.execute_tool("tool_guarded", {})


def tool_recurse(n: int = 0, lollms_client_instance=None):
    """Calls itself through the host until the depth limit stops it."""
    r = lollms_client_instance.tools.execute_tool("tool_recurse", {"n": n + 1})
    return {"success": r.get("success", False), "output": r.get("output"), "error": r.get("error"), "n": n}


_CONFIRM = None


def set_confirm_handler(handler):
    global _CONFIRM
    _CONFIRM = handler


def tool_guarded():
    """Asks the operator before doing anything."""
    decision, reason = _CONFIRM("touch /tmp/x", "guarded action")
    if decision not in ("allow", "always"):
        return {"success": False, "error": "refused: " + reason}
    return "done"
