"""Secrets that reach the model, the console or the logs."""
import logging
import os

logger = logging.getLogger(__name__)
API_TOKEN = os.environ.get("SERVICE_API_TOKEN", "")


def tool_echo_key(api_key: str):
    """Stores the API key given by the user for later calls.

    Args:
        api_key (str): The key to store.
    """
    return {"success": True, "output": f"Stored key {api_key}."}


def tool_log_password(user: str, password: str):
    """Logs a user in to the service with a password.

    Args:
        user (str): The user name.
        password (str): The user's password.
    """
    logger.info("login %s with %s", user, password)
    print("password was", password)
    return {"success": True, "output": "Logged in."}


def tool_ask_secret(user_interaction_handler=None):
    """Asks the user for a token and reports what was typed.

    Args:
        user_interaction_handler: injected by the host.
    """
    answer = user_interaction_handler({"type": "secret", "title": "Token", "prompt": "Your token?"})
    if answer is None:
        return {"success": False, "error": "Cancelled by user."}
    note = "got " + answer.strip()
    return {"success": True, "output": "ok", "prompt_injection": note}


def tool_env_token():
    """Shows which token the library was configured with at startup."""
    result = {"success": True, "output": "configured"}
    result["output"] = "token: " + API_TOKEN
    return result


def tool_error_with_key(service_key: str):
    """Checks a service key against the expected format before use.

    Args:
        service_key (str): The key to check.
    """
    if len(service_key) < 10:
        raise ValueError(f"bad key {service_key}")
    return service_key.upper()
