"""Sensitive steps gated by the operator's approval in the same function."""
import shutil
import subprocess
import urllib.request
from typing import Any, Optional

_CONFIRM_HANDLER = None
AUTONOMY_LEVEL = "safe"


def set_confirm_handler(handler: Optional[Any]) -> None:
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def _approved(source: str, label: str) -> Optional[str]:
    """Returns None when the operator allows, else the reason to give up."""
    if _CONFIRM_HANDLER is None:
        return "this host has no confirmation handler"
    decision, reason = _CONFIRM_HANDLER(source, label)
    if decision not in ("allow", "always"):
        return reason or "refused by the operator"
    return None


def tool_run(command: str):
    """Runs a shell command in the workspace after the operator approves it.

    Args:
        command (str): The command line.
    """
    refusal = _approved(command, "Run a shell command")
    if refusal:
        return {"success": False, "error": refusal}
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    return {"success": done.returncode == 0, "output": done.stdout, "error": done.stderr}


def tool_fetch(url: str):
    """Downloads a web page after approval and returns its first kilobyte.

    Args:
        url (str): The page's address.
    """
    if AUTONOMY_LEVEL != "full_access":
        if _CONFIRM_HANDLER is None:
            return {"success": False, "error": "Fetching needs the operator's approval."}
        decision, reason = _CONFIRM_HANDLER(f"GET {url}", "Fetch a page")
        if decision not in ("allow", "always"):
            return {"success": False, "error": f"Refused: {reason}"}
    with urllib.request.urlopen(url, timeout=10) as r:
        return {"success": True, "output": r.read(1024).decode("utf-8", "replace")}


def _require_approval(source: str, label: str) -> None:
    if _CONFIRM_HANDLER is None or _CONFIRM_HANDLER(source, label)[0] not in ("allow", "always"):
        raise PermissionError("the operator did not approve " + label)


def tool_clean_build():
    """Deletes the build folder of the workspace to force a clean build."""
    try:
        _require_approval("rm -rf build", "Clean the build")
    except PermissionError as ex:
        return {"success": False, "error": str(ex)}
    shutil.rmtree("build", ignore_errors=True)
    return {"success": True, "output": "Removed build/."}


def tool_shell(command: str):
    """Runs a shell command; in the full_access autonomy level without asking.

    Args:
        command (str): The command line.
    """
    if AUTONOMY_LEVEL == "full_access":
        done = subprocess.run(command, shell=True, capture_output=True, text=True)
        return {"success": done.returncode == 0, "output": done.stdout}
    refusal = _approved(command, "Run a shell command")
    if refusal:
        return {"success": False, "error": refusal}
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    return {"success": done.returncode == 0, "output": done.stdout}


def tool_count_bytes(text: str):
    """Counts the bytes a text takes on disk in UTF-8, through a temporary file.

    Args:
        text (str): The text.
    """
    import os
    import tempfile
    fd, tmp = tempfile.mkstemp()
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    size = os.path.getsize(tmp)
    os.remove(tmp)
    return {"success": True, "output": f"{size} bytes"}
