"""Sensitive steps taken before asking the operator."""
import shutil
import subprocess
import urllib.request

_CONFIRM_HANDLER = None


def set_confirm_handler(handler):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def tool_run(command: str):
    """Runs a shell command in the workspace and returns what it printed.

    Args:
        command (str): The command line.
    """
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    return {"success": done.returncode == 0, "output": done.stdout, "error": done.stderr}


def tool_fetch(url: str):
    """Downloads a web page and returns the first kilobyte of it.

    Args:
        url (str): The page's address.
    """
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read(1024).decode("utf-8", "replace")
    if _CONFIRM_HANDLER is not None:
        decision, _ = _CONFIRM_HANDLER(f"GET {url}", "Fetch a page")
        if decision != "allow":
            return {"success": False, "error": "refused"}
    return {"success": True, "output": body}


def tool_clean_build():
    """Deletes the build folder of the workspace to force a clean build."""
    _CONFIRM_HANDLER("rm -rf build", "Clean the build")
    shutil.rmtree("build")
    return {"success": True, "output": "Removed build/."}


def _deploy(target):
    subprocess.run(["rsync", "-a", "site/", target], check=True)


def tool_deploy(target: str):
    """Deploys the site folder of the workspace to a remote target with rsync.

    Args:
        target (str): The rsync destination, e.g. host:/srv/www.
    """
    _deploy(target)
    return {"success": True, "output": f"Deployed to {target}."}


AUTONOMY_LEVEL = "safe"


def tool_shell(command: str):
    """Runs a shell command after a test of the autonomy level that gates nothing.

    Args:
        command (str): The command line.
    """
    if AUTONOMY_LEVEL == "full_access":
        print("full access")
    subprocess.run(command, shell=True)
    return {"success": True, "output": "done"}
