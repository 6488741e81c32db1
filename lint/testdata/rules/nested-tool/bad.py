class Tools:
    def tool_inside_class(self):
        """Cannot be called: it is a method, not a module attribute."""
        return {"success": True, "output": "never"}


def make():
    def tool_inside_function():
        """Cannot be called: it only exists while make() runs."""
        return {"success": True, "output": "never"}
    return tool_inside_function
