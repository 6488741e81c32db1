def tool_add(a: int, b: int):
    """Adds.

    Args:
        a (int): The first number.
        b (int): The second number.
    """
    return {"success": True, "output": str(a + b)}


def tool_now():
    return {"success": True, "output": "12:00"}


def tool_empty():
    """"""
    return {"success": True, "output": ""}
