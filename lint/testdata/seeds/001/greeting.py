from typing import Dict

def tool_greet(name: str, excitement_level: int = 1) -> Dict:
    """
    Greets a person with an adjustable level of enthusiasm.

    Args:
        name (str): The name of the person to greet.
        excitement_level (int): Number of exclamation marks to add (1-5).
    """
    level = max(1, min(5, int(excitement_level)))
    return {"success": True, "output": f"Hello, {name}{'!' * level}"}
