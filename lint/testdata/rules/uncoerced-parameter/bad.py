"""Numbers and booleans the schema shows as strings, used raw."""


def tool_repeat(text: str, times=3):
    """Repeats a text a number of times, one copy per line.

    Args:
        text (str): The text to repeat.
        times: How many copies (no annotation: the schema says string).
    """
    return {"success": True, "output": "\n".join([text] * times) if times > 0 else ""}


def tool_head(path_name: str, lines=10):
    """Returns the first lines of a text given inline by the model.

    Args:
        path_name (str): A label for the text.
        lines: How many lines to keep.
    """
    kept = path_name.splitlines()[:lines]
    return {"success": True, "output": "\n".join(kept)}


def tool_greet(name: str, shout=False):
    """Greets a person by name, optionally in capital letters.

    Args:
        name (str): Who to greet.
        shout: Whether to use capital letters.
    """
    text = f"Hello {name}"
    if shout:
        text = text.upper()
    return {"success": True, "output": text}


def tool_wait(seconds):
    """Waits for a number of seconds before answering, to pace a workflow.

    Args:
        seconds: How long to wait.
    """
    import time
    time.sleep(seconds)
    return {"success": True, "output": f"waited {seconds} s"}


def tool_bar(width="20"):
    """Draws a text progress bar of a given width for the user to see.

    Args:
        width: The bar's width in characters.
    """
    return {"success": True, "output": "#" * width}
