import sys

if sys.platform.startswith("linux"):
    def tool_platform():
        """Returns the name of the operating system this worker runs on."""
        return {"success": True, "output": "Linux"}
else:
    def tool_platform():
        """Returns the name of the operating system this worker runs on."""
        return {"success": True, "output": sys.platform}
