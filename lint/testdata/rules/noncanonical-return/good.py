"""Canonical results on every branch, in the forms the rule accepts."""
import sys
from typing import Any, Dict, Optional

_USER_INTERACTION_HANDLER = None


def _fail(message: str) -> Dict[str, Any]:
    return {"success": False, "error": message}


def _ask(title: str, prompt: str) -> Optional[str]:
    if _USER_INTERACTION_HANDLER is None:
        return None
    return _USER_INTERACTION_HANDLER({"type": "text", "title": title, "prompt": prompt})


def tool_add(a: int, b: int):
    """Adds two integers and returns their sum to the model.

    Args:
        a (int): The first number.
        b (int): The second number.
    """
    return {"success": True, "output": str(a + b), "sum": a + b}


def tool_lookup(word: str):
    """Looks a word up in the glossary of the workspace.

    Args:
        word (str): The word to look up.
    """
    glossary = {"lcp": "a tool format"}
    if word not in glossary:
        return _fail(f"Unknown word '{word}': try one of {', '.join(glossary)}.")
    return dict(success=True, output=glossary[word])


def tool_check(url: str):
    """Reports whether a URL of the workspace's configuration looks valid.

    Args:
        url (str): The URL to check.
    """
    result = {"success": url.startswith("https://"), "url": url}
    if result["success"]:
        result["output"] = f"{url} looks valid."
    else:
        result["error"] = f"{url} is not an https URL."
    return result


def tool_ask_color():
    """Asks the user for their favourite colour and repeats it."""
    answer = _ask("Colour", "Which colour?")
    if answer is None:
        return {"success": False, "error": "Cancelled by user."}
    return {"success": True, "output": f"You like {answer}."}


def tool_loop(n: int = 3):
    """Counts down from a number and reports when it reaches zero.

    Args:
        n (int): Where to start.
    """
    while True:
        n -= 1
        if n <= 0:
            break
    try:
        value = 10 // (n + 1)
    except ZeroDivisionError as ex:
        return {"success": False, "error": str(ex)}
    else:
        return {"success": True, "output": f"reached zero ({value})"}


def tool_match(kind: str):
    """Describes a kind of file: 'text', 'image' or anything else.

    Args:
        kind (str): The kind of file.
    """
    match kind:
        case "text":
            return {"success": True, "output": "a text file"}
        case "image":
            return {"success": True, "output": "an image"}
        case _:
            return {"success": False, "error": f"unknown kind {kind}"}


def tool_quit(code: int = 0):
    """Stops the worker process on purpose, for a test of the host's recovery.

    Args:
        code (int): The exit status.
    """
    sys.exit(code)


async def tool_stream_lines(text: str):
    """Yields the lines of a text one by one to a streaming host.

    Args:
        text (str): The text.
    """
    for line in text.splitlines():
        yield line


def tool_not_yet(topic: str):
    """Will summarize a topic of the workspace once it is implemented.

    Args:
        topic (str): The topic.
    """
    raise NotImplementedError
