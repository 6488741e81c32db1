"""Answers checked for None before use."""
_USER_INTERACTION_HANDLER = None


def _ask(kind, title, prompt, options=None, default=None):
    if _USER_INTERACTION_HANDLER is None:
        raise RuntimeError("no user interaction handler")
    return _USER_INTERACTION_HANDLER({"type": kind, "title": title, "prompt": prompt,
                                      "options": options or [], "default": default})


def tool_pick_region():
    """Asks the user which region to deploy to and confirms the choice."""
    region = _ask("select", "Region", "Deploy where?", ["eu", "us"])
    if region is None:
        return {"success": False, "error": "Cancelled by user."}
    return {"success": True, "output": f"Deploying to {region.upper()}."}


def tool_rename(user_interaction_handler=None):
    """Asks the user for a new project name and applies it to the workspace."""
    answer = user_interaction_handler({"type": "text", "title": "Name", "prompt": "New name?"})
    if not answer or not answer.strip():
        return {"success": False, "error": "Cancelled by user (a name is required)."}
    return {"success": True, "output": f"Renamed to {answer.strip()}."}


def tool_tag(user_interaction_handler=None):
    """Asks the user for a release tag, 'latest' when none is given, and records it."""
    ask = user_interaction_handler or _USER_INTERACTION_HANDLER
    tag = ask({"type": "text", "title": "Tag", "prompt": "Which tag?", "default": "latest"}) or "latest"
    return {"success": True, "output": f"Tagged {tag} ({len(tag)} characters)."}


def tool_choose_size(user_interaction_handler=None):
    """Asks the user for a size among small, medium and large and reports it."""
    size = user_interaction_handler({"type": "select", "title": "Size", "prompt": "Which size?",
                                     "options": ["small", "medium", "large"]})
    if size not in ("small", "medium", "large"):
        return {"success": False, "error": "Cancelled by user (no size chosen)."}
    return {"success": True, "output": f"Size {size.upper()} chosen."}
