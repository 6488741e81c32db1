from typing import Any, Dict

def tool_greet(name: str, enthusiasm: int = 1) -> Dict[str, Any]:
    """
    Greets a person with adjustable enthusiasm.

    Args:
        name (str): The name of the person to greet.
        enthusiasm (int): Number of exclamation marks (1-5).
    """
    return {"success": True, "output": f"Hello {name}" + "!" * max(1, min(5, enthusiasm))}
