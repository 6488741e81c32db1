"""Numbers and booleans annotated, or coerced before use."""
from typing import Any


def tool_repeat(text: str, times: int = 3):
    """Repeats a text a number of times, one copy per line.

    Args:
        text (str): The text to repeat.
        times (int): How many copies.
    """
    return {"success": True, "output": "\n".join([text] * times) if times > 0 else ""}


def tool_head(text: str, lines=10):
    """Returns the first lines of a text given inline by the model.

    Args:
        text (str): The text.
        lines: How many lines to keep.
    """
    lines = int(lines) if isinstance(lines, str) else lines
    return {"success": True, "output": "\n".join(text.splitlines()[:lines])}


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def tool_greet(name: str, shout=False):
    """Greets a person by name, optionally in capital letters.

    Args:
        name (str): Who to greet.
        shout: Whether to use capital letters.
    """
    text = f"Hello {name}"
    if _as_bool(shout):
        text = text.upper()
    return {"success": True, "output": text}


def tool_wait(seconds: float = 1.0):
    """Waits for a number of seconds before answering, to pace a workflow.

    Args:
        seconds (float): How long to wait.
    """
    import time
    time.sleep(seconds)
    return {"success": True, "output": f"waited {seconds} s"}


def tool_label(name: str, count=""):
    """Formats a label with an optional count the model gives as text.

    Args:
        name (str): The label.
        count: A count shown as written, e.g. '3'.
    """
    return {"success": True, "output": "%s (%s)" % (name, count) if count else name}
