"""
user_interactive_tools: connect the user to an external service.

The API key, the region and a description are things only the user knows:
the tools ask for them through the host's user interaction handler. The key
is kept in the workspace file service_connections.json and only a masked
form of it ever reaches a result. Testing a connection makes a network
request, so it asks the operator first through the confirm handler.

Host configuration (host_tool_configs["user_interactive_tools"]):
    autonomy_level: "strict" | "safe" | "full_access" (default "safe");
        full_access tests connections without asking.
    test_urls: {service_name: url} - where each service is tested; the key
        is sent as a bearer token only to these operator-given URLs.
    test_url: a URL template for other services, with {service} and
        {region} placeholders; the key is sent there too.
    Without either, the test only checks that the network is reachable
    (DEFAULT_TEST_URL) and does not send the key.
"""
import datetime
import json
import os
import re
import urllib.error
import urllib.request
from typing import Any, Dict, Optional

TOOL_LIBRARY_NAME = "User Interactive Tools"
TOOL_LIBRARY_DESC = "Configures service connections with the user's API key, region and description, and tests them with the operator's approval."
TOOL_LIBRARY_ICON = "🔐"

# Hints for MCP clients (read by lcp without running this module).
TOOL_ANNOTATIONS = {
    "tool_configure_service_connection": {
        "title": "Configure service connection",
        "readOnlyHint": False, "destructiveHint": True,  # replaces a saved connection
        "idempotentHint": False, "openWorldHint": False,
    },
    "tool_test_service_connection": {
        "title": "Test service connection",
        "readOnlyHint": True, "openWorldHint": True,  # one outbound request
    },
}

REGIONS = ["eu-west", "us-east", "us-west", "ap-south"]
CONNECTIONS_FILE = "service_connections.json"
DEFAULT_TEST_URL = "https://example.com/"
TEST_TIMEOUT_SECONDS = 10

AUTONOMY_LEVEL = "safe"
_CONFIRM_HANDLER = None
_USER_INTERACTION_HANDLER = None
_CONFIG: Dict[str, Any] = {}

_SERVICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def set_confirm_handler(handler: Optional[Any]) -> None:
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def set_user_interaction_handler(handler: Optional[Any]) -> None:
    global _USER_INTERACTION_HANDLER
    _USER_INTERACTION_HANDLER = handler


def init_tools_library(config: Optional[dict] = None) -> None:
    global AUTONOMY_LEVEL, _CONFIRM_HANDLER, _USER_INTERACTION_HANDLER, _CONFIG
    if not isinstance(config, dict):
        return
    _CONFIG = config
    AUTONOMY_LEVEL = config.get("autonomy_level") or "safe"
    _CONFIRM_HANDLER = config.get("confirm_handler", _CONFIRM_HANDLER)
    _USER_INTERACTION_HANDLER = config.get("user_interaction_handler", _USER_INTERACTION_HANDLER)


def _mask(secret: str) -> str:
    """Shows at most the first and last four characters of a long secret."""
    if len(secret) >= 12:
        return secret[:4] + "..." + secret[-4:]
    if len(secret) >= 8:
        return "***" + secret[-2:]
    return "****"


def _ask(kind: str, title: str, prompt: str, options=None, default=None) -> Optional[str]:
    if _USER_INTERACTION_HANDLER is None:
        raise RuntimeError("this host cannot ask the user questions")
    answer = _USER_INTERACTION_HANDLER({
        "type": kind,
        "title": title,
        "prompt": prompt,
        "options": list(options or []),
        "default": default,
    })
    if answer is None:
        return None
    return str(answer)


def _load_connections() -> Dict[str, Any]:
    try:
        with open(CONNECTIONS_FILE, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ValueError(CONNECTIONS_FILE + " does not hold a JSON object")
    return data


def _save_connections(data: Dict[str, Any]) -> None:
    # Written to a new file readable by the owner only, then renamed over
    # the old one: the file holds API keys.
    tmp = CONNECTIONS_FILE + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, CONNECTIONS_FILE)


def _check_name(service_name: Any) -> Optional[str]:
    if not isinstance(service_name, str) or not _SERVICE_NAME.match(service_name):
        return ("service_name must be 1 to 64 letters, digits, '_', '.' or '-', "
                "starting with a letter or digit (for example 'weather_api').")
    return None


def tool_configure_service_connection(service_name: str) -> Dict[str, Any]:
    """
    Configures the connection to an external service by asking the user for
    its API key, its region and an optional description, then saves it in the
    workspace. The key never appears in the result, only a masked form.

    Args:
        service_name (str): Name of the service to configure, e.g. 'weather_api'.
    """
    problem = _check_name(service_name)
    if problem:
        return {"success": False, "error": problem}
    if _USER_INTERACTION_HANDLER is None:
        return {"success": False, "error": "This host cannot ask the user questions, so the service cannot be configured here."}

    api_key = _ask("secret", f"API key for {service_name}",
                   f"Enter the API key of '{service_name}'. It is stored in the workspace and never shown to the assistant.")
    if api_key is None or not api_key.strip():
        return {"success": False, "error": "Cancelled by user (an API key is required)."}
    api_key = api_key.strip()

    region = _ask("select", f"Region of {service_name}", "Choose the region to connect to:", REGIONS, "eu-west")
    if region is None:
        return {"success": False, "error": "Cancelled by user (region)."}
    if region not in REGIONS:
        return {"success": False, "error": f"Unknown region '{region}': choose one of {', '.join(REGIONS)}."}

    description = _ask("text", f"Description of {service_name}",
                       "Optionally describe what this connection is for (leave empty to skip):", default="")
    if description is None:
        return {"success": False, "error": "Cancelled by user (description)."}

    try:
        connections = _load_connections()
    except (OSError, ValueError) as ex:
        return {"success": False, "error": f"Cannot read {CONNECTIONS_FILE}: {ex}"}
    connections[service_name] = {
        "api_key": api_key,
        "region": region,
        "description": description.strip(),
        "configured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        _save_connections(connections)
    except OSError as ex:
        return {"success": False, "error": f"Cannot write {CONNECTIONS_FILE}: {ex}"}

    masked = _mask(api_key)
    return {
        "success": True,
        "output": (f"Service '{service_name}' is configured: region {region}, API key {masked}"
                   + (f", '{description.strip()}'" if description.strip() else "")
                   + f". Saved to {CONNECTIONS_FILE}."),
        "service_name": service_name,
        "region": region,
        "masked_key": masked,
        "file": CONNECTIONS_FILE,
    }


def _test_target(service_name: str, region: str):
    """Returns (url, send_key): the key only goes to URLs the operator set."""
    urls = _CONFIG.get("test_urls")
    if isinstance(urls, dict) and isinstance(urls.get(service_name), str):
        return urls[service_name], True
    template = _CONFIG.get("test_url")
    if isinstance(template, str) and template:
        return template.replace("{service}", service_name).replace("{region}", region), True
    return DEFAULT_TEST_URL, False


def tool_test_service_connection(service_name: str) -> Dict[str, Any]:
    """
    Tests a configured service connection with one outbound HTTP request,
    after the operator approves it, and reports the HTTP status.

    Args:
        service_name (str): Name of a service configured with tool_configure_service_connection.
    """
    problem = _check_name(service_name)
    if problem:
        return {"success": False, "error": problem}
    try:
        connection = _load_connections().get(service_name)
    except (OSError, ValueError) as ex:
        return {"success": False, "error": f"Cannot read {CONNECTIONS_FILE}: {ex}"}
    if not isinstance(connection, dict) or not connection.get("api_key"):
        return {"success": False,
                "error": f"Service '{service_name}' is not configured: call tool_configure_service_connection first."}

    region = str(connection.get("region", ""))
    url, send_key = _test_target(service_name, region)
    if not url.startswith(("https://", "http://")):
        return {"success": False, "error": f"The test URL '{url}' is not an http(s) URL; check the host configuration."}
    key_note = f"with the API key {_mask(connection['api_key'])}" if send_key else "without the API key"

    if AUTONOMY_LEVEL != "full_access":
        if _CONFIRM_HANDLER is None:
            return {"success": False,
                    "error": "Testing a connection makes a network request that needs the operator's approval, "
                             "and this host has no confirmation handler."}
        decision, reason = _CONFIRM_HANDLER(
            f"GET {url} {key_note}",
            f"Allow a test network request for service '{service_name}'?",
        )
        if decision not in ("allow", "always"):
            return {"success": False, "error": f"The operator refused the network test: {reason or 'no reason given'}"}

    request = urllib.request.Request(url, method="GET", headers={"User-Agent": "lcp-user-interactive-tools/1"})
    if send_key:
        request.add_header("Authorization", "Bearer " + connection["api_key"])
    try:
        with urllib.request.urlopen(request, timeout=TEST_TIMEOUT_SECONDS) as response:
            status = response.status
    except urllib.error.HTTPError as ex:
        status = ex.code
    except (urllib.error.URLError, OSError) as ex:
        reason = getattr(ex, "reason", ex)
        return {"success": False, "error": f"Service '{service_name}' is unreachable at {url}: {reason}",
                "service_name": service_name, "url": url}

    ok = 200 <= status < 400
    summary = f"HTTP {status} from {url} for service '{service_name}' (region {region}, {key_note})."
    result = {"success": ok, "service_name": service_name, "url": url, "http_status": status, "region": region}
    if ok:
        result["output"] = summary
    else:
        result["error"] = summary
    return result
