"""Answers to questions used before checking for None."""
_USER_INTERACTION_HANDLER = None


def _ask(kind, title, prompt, options=None):
    if _USER_INTERACTION_HANDLER is None:
        raise RuntimeError("no user interaction handler")
    return _USER_INTERACTION_HANDLER({"type": kind, "title": title, "prompt": prompt, "options": options or []})


def tool_pick_region():
    """Asks the user which region to deploy to and confirms the choice."""
    region = _ask("select", "Region", "Deploy where?", ["eu", "us"])
    return {"success": True, "output": f"Deploying to {region.upper()}."}


def tool_rename(user_interaction_handler=None):
    """Asks the user for a new project name and applies it to the workspace."""
    name = user_interaction_handler({"type": "text", "title": "Name", "prompt": "New name?"}).strip()
    return {"success": True, "output": f"Renamed to {name}."}


def tool_tag(user_interaction_handler=None):
    """Asks the user for a release tag and records it in the release notes."""
    ask = user_interaction_handler or _USER_INTERACTION_HANDLER
    tag = ask({"type": "text", "title": "Tag", "prompt": "Which tag?"})
    size = len(tag)
    if tag is None:
        return {"success": False, "error": "Cancelled by user."}
    return {"success": True, "output": f"Tagged {tag} ({size} characters)."}
