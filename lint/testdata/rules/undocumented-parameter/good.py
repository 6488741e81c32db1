def tool_scale(value: float, factor: float = 2.0, *, clamp: bool = False, tool_context=None):
    """Multiplies a value by a factor, as the user asks for unit conversions.

    Args:
        value (float): The value to scale.
        factor (float): The factor.
        clamp (bool): Keep the result between 0 and 1.
    """
    result = value * factor
    if clamp:
        result = max(0.0, min(1.0, result))
    return {"success": True, "output": str(result)}
