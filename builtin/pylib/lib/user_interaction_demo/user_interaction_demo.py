"""
user_interaction_demo: one tool that gathers everything a deployment needs
from the people at the keyboard.

tool_prepare_deployment shows both human-in-the-loop channels of LCP: the
confirm handler for authorization (a production target needs the
operator's approval) and the user interaction handler for information (a
rollout strategy, registry credentials, an image tag). The handler arrives
as the hidden user_interaction_handler parameter, or through the module
hooks when the host prefers those.
"""
from typing import Any, Dict, Optional

TOOL_LIBRARY_NAME = "User Interaction Demo"
TOOL_LIBRARY_DESC = "Demonstrates operator approval and user questions (select, secret, text) by preparing a deployment plan."
TOOL_LIBRARY_ICON = "🚀"

# Hints for MCP clients (read by lcp without running this module): the
# tool only returns a plan; it deploys nothing.
TOOL_ANNOTATIONS = {
    "tool_prepare_deployment": {"title": "Prepare deployment", "readOnlyHint": True, "openWorldHint": False},
}

STRATEGIES = ["blue-green", "rolling", "canary"]

_CONFIRM_HANDLER = None
_USER_INTERACTION_HANDLER = None


def set_confirm_handler(handler: Optional[Any]) -> None:
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def set_user_interaction_handler(handler: Optional[Any]) -> None:
    global _USER_INTERACTION_HANDLER
    _USER_INTERACTION_HANDLER = handler


def init_tools_library(config: Optional[dict] = None) -> None:
    global _CONFIRM_HANDLER, _USER_INTERACTION_HANDLER
    if isinstance(config, dict):
        _CONFIRM_HANDLER = config.get("confirm_handler", _CONFIRM_HANDLER)
        _USER_INTERACTION_HANDLER = config.get("user_interaction_handler", _USER_INTERACTION_HANDLER)


def _masked(key: str) -> str:
    return "***" + key[-4:] if len(key) >= 8 else "****"


def tool_prepare_deployment(
    action: str = "deploy",
    target: str = "production",
    user_interaction_handler=None,
) -> Dict[str, Any]:
    """
    Prepares a deployment plan: asks the operator to approve production
    targets, then asks the user for the rollout strategy, the registry API
    key and the image tag, and returns the plan (the key only masked).

    Args:
        action (str): What to do, e.g. 'deploy' or 'rollback'.
        target (str): The environment, e.g. 'production' or 'staging'.
    """
    ask = user_interaction_handler or _USER_INTERACTION_HANDLER
    if ask is None:
        return {"success": False, "error": "This host has no user interaction handler, so the deployment details cannot be collected."}
    action = str(action or "deploy").strip()
    target = str(target or "production").strip()

    if target.lower() == "production":
        if _CONFIRM_HANDLER is None:
            return {"success": False,
                    "error": "Production deployments need the operator's approval, and this host has no confirmation handler."}
        decision, reason = _CONFIRM_HANDLER(
            f"prepare_deployment(action={action!r}, target={target!r})",
            f"deploy:{target}",
        )
        if decision not in ("allow", "always"):
            return {"success": False, "error": f"The operator refused access to {target}: {reason or 'no reason given'}"}

    strategy = ask({
        "type": "select",
        "title": f"Rollout strategy for {target}",
        "prompt": f"How should '{action}' roll out to {target}?",
        "options": list(STRATEGIES),
        "default": "canary",
    })
    if strategy is None:
        return {"success": False, "error": "Cancelled by user (strategy selection)."}
    if strategy not in STRATEGIES:
        return {"success": False, "error": f"Unknown strategy '{strategy}': choose one of {', '.join(STRATEGIES)}."}

    api_key = ask({
        "type": "secret",
        "title": "Registry credentials",
        "prompt": f"API key of the {target} container registry:",
        "options": [],
        "default": None,
    })
    if not api_key:
        return {"success": False, "error": "Cancelled by user (the registry API key is required)."}

    image_tag = ask({
        "type": "text",
        "title": "Image tag",
        "prompt": "Image tag to deploy:",
        "options": [],
        "default": "latest",
    })
    if image_tag is None:
        return {"success": False, "error": "Cancelled by user (image tag)."}
    image_tag = image_tag.strip() or "latest"

    return {
        "success": True,
        "output": (f"Deployment prepared: {action} to {target} with a {strategy} rollout of tag "
                   f"'{image_tag}' (registry key {_masked(api_key)})."),
        "action": action,
        "target": target,
        "strategy": strategy,
        "image_tag": image_tag,
    }
