"""Secrets handled as the checklist says: masked or kept out."""
import logging
from typing import Optional

logger = logging.getLogger(__name__)
_USER_INTERACTION_HANDLER = None


def set_user_interaction_handler(handler) -> None:
    global _USER_INTERACTION_HANDLER
    _USER_INTERACTION_HANDLER = handler


def _mask(secret: str) -> str:
    return secret[:2] + "..." + secret[-2:] if len(secret) > 8 else "****"


def _ask(kind: str, title: str, prompt: str) -> Optional[str]:
    if _USER_INTERACTION_HANDLER is None:
        raise RuntimeError("this host cannot ask questions")
    return _USER_INTERACTION_HANDLER({"type": kind, "title": title, "prompt": prompt})


def tool_store_key(api_key: str):
    """Stores the API key given by the user for later calls.

    Args:
        api_key (str): The key to store.
    """
    with open("key.txt", "w", encoding="utf-8") as f:
        f.write(api_key)
    return {"success": True, "output": f"Stored key {_mask(api_key)} ({len(api_key)} characters)."}


def tool_login(user: str, password: str):
    """Logs a user in to the service with a password.

    Args:
        user (str): The user name.
        password (str): The user's password.
    """
    logger.info("login %s (password of %d characters)", user, len(password))
    if not password:
        return {"success": False, "error": "The password is empty."}
    return {"success": True, "output": f"Logged in as {user}."}


def tool_ask_token():
    """Asks the user for an access token and keeps only its last characters."""
    token = _ask("secret", "Token", "Your access token?")
    if token is None:
        return {"success": False, "error": "Cancelled by user."}
    tail = f"***{token[-4:]}"
    return {"success": True, "output": f"Token {tail} saved.", "masked_token": tail}


def tool_count_tokens(text: str, max_tokens: int = 100):
    """Counts the words of a text, as a language model's tokens would be counted.

    Args:
        text (str): The text.
        max_tokens (int): The most tokens to count.
    """
    tokens = text.split()[:max_tokens]
    for token in tokens:
        print(token)
    return {"success": True, "output": f"{len(tokens)} tokens", "first_token": tokens[0] if tokens else ""}
