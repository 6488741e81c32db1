"""Results that are not {"success", "output"/"error"} on some branch."""
from typing import Optional

_USER_INTERACTION_HANDLER = None


def tool_add(a: int, b: int):
    """Adds two integers and returns their sum to the model.

    Args:
        a (int): The first number.
        b (int): The second number.
    """
    return a + b


def tool_lookup(word: str):
    """Looks a word up in the glossary of the workspace.

    Args:
        word (str): The word to look up.
    """
    glossary = {"lcp": "a tool format"}
    if word not in glossary:
        return f"unknown word {word}"
    return {"success": True, "output": glossary[word]}


def tool_status_only(name: str):
    """Reports whether a named service looks reachable right now.

    Args:
        name (str): The service's name.
    """
    if not name:
        return {"success": False}
    return {"output": f"{name} is fine"}


def tool_ask_color():
    """Asks the user for their favourite colour and repeats it."""
    answer: Optional[str] = _USER_INTERACTION_HANDLER({"type": "text", "title": "Colour", "prompt": "Which colour?"})
    if answer is None:
        return None
    return {"success": True, "output": f"You like {answer}."}


def tool_maybe(flag: bool = False):
    """Returns a greeting only when the flag is set, else nothing at all.

    Args:
        flag (bool): Whether to greet.
    """
    if flag:
        return {"success": True, "output": "hello"}


def tool_bare(n: int = 1):
    """Counts down from a number and stops early on zero without a result.

    Args:
        n (int): Where to start.
    """
    while n > 0:
        n -= 1
        if n == 0:
            return
    return {"success": True, "output": "done"}


def tool_ternary(ok: bool = True):
    """Answers with a dict on success and a plain string on failure, at once.

    Args:
        ok (bool): Whether it went well.
    """
    return {"success": True, "output": "fine"} if ok else "failed"
