import time


def tool_add(a: int, b: int):
    """Adds two integers; use it for any arithmetic sum the user asks for.

    Args:
        a (int): The first number.
        b (int): The second number.
    """
    return {"success": True, "output": str(a + b)}


def tool_now():
    """Returns the current local time (HH:MM)."""
    return {"success": True, "output": time.strftime("%H:%M")}


def tool_weather(city: str):
    """Short.

    Args:
        city (str): The city.
    """
    return {"success": True, "output": f"Sunny in {city}."}


def tool_weather_prompt():
    return "Reports today's weather of a city; use it when the user asks about the weather."
