_CONFIRM_HANDLER = None

def set_confirm_handler(handler):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler

def init_tools_library(config=None):
    global _CONFIRM_HANDLER
    if config and isinstance(config, dict):
        _CONFIRM_HANDLER = config.get("confirm_handler", _CONFIRM_HANDLER)

def tool_deploy_website(site_name: str, target_dir: str) -> Dict:
    """
    Deploys the workspace site to a production directory.

    Args:
        site_name (str): Name of the site to deploy.
        target_dir (str): Destination directory for the deployment.
    """
    if _CONFIRM_HANDLER is not None:
        source = f"Copy built assets of '{site_name}' to '{target_dir}'"
        decision, reason = _CONFIRM_HANDLER(source, f"Deploy website '{site_name}'")
        if decision not in ("allow", "always"):
            return {"success": False,
                    "error": f"Deployment denied by operator: {reason or 'no reason given'}"}
    # ... perform the deployment ...
    return {"success": True, "output": f"Site '{site_name}' deployed to {target_dir}."}
