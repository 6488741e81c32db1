def tool_ok(a: int):
    """Returns the number it is given, unchanged, for a smoke test.

    Args:
        a (int): The number.
    """
    return {"success": True, "output": str(a)}
